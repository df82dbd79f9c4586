"""Statement fingerprints: recognise statements that a user's override copied from upstream code.

A user who overrides ``Trainer._inner_training_loop`` usually starts from a copy of the real method and
changes a few lines. The linter must not report the copied lines as the user's own code, so it compares
every statement of the override with the statements of the upstream method in each catalogued release
(``Catalog.upstream_fingerprints()``). Both sides are computed by this module: the catalogue builders
(``scripts/build_catalog.py``, ``scripts/build_trl_catalog.py``) on the released wheels, the linter on the
user's file. Pure ``ast`` and ``hashlib``; the output is the same on Python 3.10 to 3.13.

What a fingerprint is
---------------------
Every statement at every depth of a function body gets one (the function's docstring excluded; a nested
``def``/``class`` is a statement of its own, and its body is walked too, its docstring excluded). The
fingerprint is ``blake2b(digest_size=8)`` (16 hex characters) of the statement's *context* and its
normalised text:

- the text of a simple statement is the whole statement; the text of a compound statement is its header
  only (``if <test>``, ``for <target> in <iter>``, ``while <test>``, ``with <items>``, ``try``,
  ``match <subject>``, ``def name(<params>)``, ``class Name(<bases>)``), never its body;
- the context is the chain of enclosing headers from the function body down, with the branch taken:
  ``if x`` / ``else``, ``for ...`` / ``else``, ``try`` / ``except <type> as <name>`` / ``else`` /
  ``finally``, ``match ...`` / ``case <pattern> if <guard>``. It is carried as the parent's digest, so
  each statement costs one hash. The enclosing function's own name and signature are *not* part of it:
  a copy keeps matching after the user renames the method or adds a parameter.

So the same statement under a different ``if`` is a different statement, a changed header changes the
fingerprints of everything below it, and changing one simple statement changes only its own. The order
of siblings is not part of it (the fingerprints of a method are compared as a set).

Normalisation (what may differ between a real copy and upstream and still match)
---------------------------------------------------------------------------------
The text hashed is a structural dump of the tree (``Call(Attribute(Name('self'),'log'),...)``-like, see
:func:`normalise`), not the source and not ``ast.unparse``, whose output differs between 3.10, 3.11 and
3.12 (parentheses around tuple targets, quotes inside f-strings). Fields that differ between Python
versions or do not change what runs are left out (``ctx``, ``type_comment``, the ``u`` string prefix,
``type_params``); strings are written with ``ascii()`` (``repr`` of some characters depends on the
interpreter's Unicode tables); 3.12's empty literal pieces in f-string format specs are dropped. Hence:

- Formatting, comments, line breaks, parentheses, trailing commas, string quote style and implicit string
  concatenation do not matter: the tree does not record them.
- Type annotations: dropped from parameters and return types of nested ``def``s, and ``x: T = v``
  hashes as ``x = v`` (``x: T`` alone as a declaration of ``x``). Annotations do not change what runs.
- Import paths inside a function: ``from .trainer_pt_utils import f``, ``from ..utils import f`` and
  ``from transformers.trainer_pt_utils import f`` are all ``from trainer_pt_utils import f`` (only the
  last component of the module is kept): a copy moved out of the package must rewrite relative imports.
  ``from . import x``, ``from transformers import x`` and ``from trl import x`` are the same too.
- Docstrings of the function and of nested functions/classes are not statements.

Everything else is kept as written: names, attribute chains, literals, keyword order, the number of
statements. Two different statements share a fingerprint only on a 64-bit hash collision.

Speed: one walk over the function; every simple statement is dumped once, every compound statement's
header (its test, target, items) once, never its body. See ``docs/catalog.md`` for measurements.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

try:  # hashlib's own built-in BLAKE2, without hashlib's start-up (OpenSSL: 4-5 ms of every lint run)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

# Bump when the normalisation or the hashing changes: the catalogue data records the version it was built
# with, and the loader refuses fingerprints computed by a different one.
NORMALISER_VERSION = 1

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_SEP = b"\x1f"
_ROOT = b""
# Package names a copy may write instead of a relative import's ``.``.
_PACKAGE_ROOTS = frozenset({"transformers", "trl"})


# Fields that differ between Python versions or carry no meaning for what the code does.
_SKIPPED_FIELDS = frozenset({"ctx", "type_comment", "kind", "type_params", "annotation", "returns", "simple"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_of(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _SKIPPED_FIELDS)  # type: ignore[attr-defined]
    return fields


_Name, _Constant, _Attribute, _JoinedStr, _AST = ast.Name, ast.Constant, ast.Attribute, ast.JoinedStr, ast.AST


def _dump(node: object, append: Callable[[str], None]) -> None:
    """Append the canonical text of ``node``: ``Type(field,field,)`` with lists as ``[item,item,]``.

    The hot path of the module (one call per node of every simple statement): the common node types
    are tested first, by identity (``cls is _Name``), which mypy does not narrow on: hence the
    ``type: ignore[attr-defined]`` on the fields read below.
    """
    cls = node.__class__
    if cls is _Name:
        append("Name(" + ascii(node.id) + ")")  # type: ignore[attr-defined]
    elif cls is _Attribute:
        append("Attribute(")
        _dump(node.value, append)  # type: ignore[attr-defined]
        append("," + ascii(node.attr) + ")")  # type: ignore[attr-defined]
    elif cls is _Constant:
        append("Constant(" + ascii(node.value) + ")")  # type: ignore[attr-defined]
    elif cls is list:
        append("[")
        for item in node:  # type: ignore[attr-defined]
            _dump(item, append)
            append(",")
        append("]")
    elif cls is _JoinedStr:
        # 3.12.0-3.12.x emit empty ``Constant('')`` pieces in format specs that other versions do not:
        # drop empty pieces and merge adjacent literal ones.
        append("JoinedStr([")
        literal = ""
        for value in node.values:  # type: ignore[attr-defined]
            if value.__class__ is _Constant and isinstance(value.value, str):
                literal += value.value
                continue
            if literal:
                append("Constant(" + ascii(literal) + "),")
                literal = ""
            _dump(value, append)
            append(",")
        if literal:
            append("Constant(" + ascii(literal) + "),")
        append("])")
    elif isinstance(node, _AST):
        append(cls.__name__ + "(")
        for name in _FIELDS.get(cls) or _fields_of(cls):
            _dump(getattr(node, name, None), append)
            append(",")
        append(")")
    else:  # identifiers, ints (conversion, is_async), None
        append(ascii(node))


def _text(*parts: object) -> str:
    out: list[str] = []
    append = out.append
    for part in parts:
        if part.__class__ is str:
            append(part)
        else:
            _dump(part, append)
        append(" ")
    return "".join(out)


def _import_module(node: ast.ImportFrom) -> str:
    module = node.module or ""
    return "" if module in _PACKAGE_ROOTS else module.rpartition(".")[2]


def normalise(node: ast.AST) -> str:
    """The canonical text that is hashed for one statement (header only for a compound statement).

    A structural dump of the tree (``Call(Attribute(Name('self'), 'log'), ...)``-like, fields that vary
    between Python versions left out) rather than ``ast.unparse``, whose output differs between 3.10,
    3.11 and 3.12 (parentheses around tuple targets, quotes inside f-strings). An ``except`` handler or a
    ``match`` case renders its own header.
    """
    if isinstance(node, ast.If):
        return _text("if", node.test)
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _text("async for" if isinstance(node, ast.AsyncFor) else "for", node.target, "in", node.iter)
    if isinstance(node, ast.While):
        return _text("while", node.test)
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return _text("async with" if isinstance(node, ast.AsyncWith) else "with", node.items)
    if isinstance(node, ast.Try):
        return "try"
    if _TRY_STAR is not None and isinstance(node, _TRY_STAR):
        return "try*"
    if isinstance(node, ast.Match):
        return _text("match", node.subject)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
        return _text(node.decorator_list, keyword, ascii(node.name), node.args)  # annotations skipped
    if isinstance(node, ast.ClassDef):
        return _text(node.decorator_list, "class", ascii(node.name), node.bases, node.keywords)
    if isinstance(node, ast.ExceptHandler):
        return _text("except", node.type, ascii(node.name))
    if isinstance(node, ast.match_case):
        return _text("case", node.pattern, "if", node.guard)
    if isinstance(node, ast.AnnAssign):
        if node.value is None:
            return _text("declare", node.target)
        return _text(ast.Assign(targets=[node.target], value=node.value))
    if isinstance(node, ast.ImportFrom):
        return _text("from", ascii(_import_module(node)), "import", node.names)
    return _text(node)


_TRY_STAR: type | None = getattr(ast, "TryStar", None)
# Statements with a body of their own: their digest is the context of the statements inside.
_COMPOUND: tuple[type, ...] = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, *((_TRY_STAR,) if _TRY_STAR is not None else ()),
)  # fmt: skip


def _digest(context: bytes, text: str) -> bytes:
    return blake2b(context + _SEP + text.encode("utf-8"), digest_size=8).digest()


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _contexts(
    body: list[ast.stmt], context: bytes, skip_docstring: bool
) -> Iterator[tuple[bytes, ast.stmt, bytes | None]]:
    """``(context, statement, digest)`` for every statement of ``body`` at every depth, in source order.

    A statement's fingerprint is ``_digest(context, normalise(statement))``. A compound statement's
    digest is the context of its children, so it is computed here (``digest``); a simple statement's
    is left to the caller (``None``): normalising the whole statement is the expensive part, and a
    caller may need only a few of them (``LazyFingerprints``).
    """
    start = 1 if skip_docstring and body and _is_docstring(body[0]) else 0
    for i in range(start, len(body)):
        stmt = body[i]
        if not isinstance(stmt, _COMPOUND):
            yield context, stmt, None
            continue
        digest = _digest(context, normalise(stmt))
        yield context, stmt, digest
        if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield from _contexts(stmt.body, digest, False)
            if stmt.orelse:
                yield from _contexts(stmt.orelse, _digest(digest, "else"), False)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _contexts(stmt.body, digest, False)
        elif isinstance(stmt, ast.Try) or (_TRY_STAR is not None and isinstance(stmt, _TRY_STAR)):
            # ``ast.TryStar`` (3.11+) is looked up at run time: mypy sees only ``ast.Try | object``.
            yield from _contexts(stmt.body, digest, False)  # type: ignore[attr-defined]
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                yield from _contexts(handler.body, _digest(digest, normalise(handler)), False)
            if stmt.orelse:  # type: ignore[attr-defined]
                yield from _contexts(stmt.orelse, _digest(digest, "else"), False)  # type: ignore[attr-defined]
            if stmt.finalbody:  # type: ignore[attr-defined]
                yield from _contexts(stmt.finalbody, _digest(digest, "finally"), False)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                yield from _contexts(case.body, _digest(digest, normalise(case)), False)
        else:  # a nested def or class
            yield from _contexts(stmt.body, digest, True)  # type: ignore[attr-defined]


def _walk(body: list[ast.stmt], context: bytes, skip_docstring: bool) -> Iterator[tuple[str, ast.stmt]]:
    for ctx, stmt, digest in _contexts(body, context, skip_docstring):
        yield (digest if digest is not None else _digest(ctx, normalise(stmt))).hex(), stmt


class LazyFingerprints:
    """The fingerprint of any statement of ``fn``, each computed when first asked for.

    Why: the TW2xx rules ask whether a few statements of an override were copied from upstream, and
    normalising every simple statement of a long override costs more than its effect analysis."""

    def __init__(self, fn: FunctionNode) -> None:
        self._pending = {
            id(stmt): (ctx, stmt, digest) for ctx, stmt, digest in _contexts(fn.body, _ROOT, True)
        }
        self._done: dict[int, str] = {}

    def of(self, stmt: ast.stmt) -> str | None:
        """``stmt``'s fingerprint, as ``statement_fingerprints`` gives it; None for a statement that
        ``fn``'s body does not hold (or its docstring)."""
        key = id(stmt)
        found = self._done.get(key)
        if found is None:
            entry = self._pending.get(key)
            if entry is None:
                return None
            ctx, node, digest = entry
            found = self._done[key] = (digest if digest is not None else _digest(ctx, normalise(node))).hex()
        return found

    def all(self) -> list[tuple[str, ast.stmt]]:
        """Every statement's fingerprint, in source order: ``statement_fingerprints(fn)``, reusing
        the ones already asked for (and keeping the rest for later ``of`` calls)."""
        return [(self.of(stmt), stmt) for _ctx, stmt, _digest in self._pending.values()]  # type: ignore[misc]


def fingerprint_statements(fn: FunctionNode) -> Iterator[tuple[str, ast.stmt]]:
    """``(fingerprint, statement)`` for every statement of ``fn``'s body at every depth, in source order."""
    return _walk(fn.body, _ROOT, True)


def statement_fingerprints(fn: FunctionNode) -> list[tuple[str, ast.stmt]]:
    """:func:`fingerprint_statements` as a list."""
    return list(_walk(fn.body, _ROOT, True))


def fingerprint_set(fn: FunctionNode) -> frozenset[str]:
    """The distinct fingerprints of ``fn`` (what the catalogue stores per method and release)."""
    return frozenset(fp for fp, _ in _walk(fn.body, _ROOT, True))


__all__ = [
    "NORMALISER_VERSION",
    "LazyFingerprints",
    "fingerprint_set",
    "fingerprint_statements",
    "normalise",
    "statement_fingerprints",
]
