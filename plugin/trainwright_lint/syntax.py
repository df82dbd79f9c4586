"""Small, pure helpers over ``ast`` nodes that every layer of the linter shares.

Kept in one leaf module (it imports nothing of ours but the catalogue's records) so that the
project model, the analyses, the rules and the fixers all read syntax the same way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache

from trainwright.catalog import Param, Signature

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef)
NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# ``walk_expression`` also skips the ``Load``/``Store``/``Del`` markers: leaves nobody looks for, and a
# third of the nodes of a typical expression.
_NOT_WALKED = (*NESTED_SCOPES, ast.expr_context)


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for Name/Attribute chains (``Generic[T]`` reads as ``Generic``), else None."""
    if isinstance(node, ast.Subscript):
        node = node.value
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def is_self_call(node: ast.AST, name: str) -> bool:
    """``self.<name>(...)``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and is_self(node.func.value)
    )


def self_attribute(node: ast.AST) -> str | None:
    """``X`` for ``self.X`` (exactly one level)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def super_method(call: ast.AST) -> str | None:
    """``m`` for ``super().m(...)`` / ``super(C, self).m(...)``."""
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    ):
        return call.func.attr
    return None


def call_shape(call: ast.Call) -> tuple[int, tuple[str, ...], bool, bool]:
    """(positional count, keyword names, has ``*x``, has ``**y``)."""
    n_pos = 0
    star_args = False
    for a in call.args:
        if isinstance(a, ast.Starred):
            star_args = True
        else:
            n_pos += 1
    keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
    star_kwargs = any(k.arg is None for k in call.keywords)
    return n_pos, keywords, star_args, star_kwargs


def decorator_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> tuple[str, ...]:
    """Dotted names of the decorators (``@torch.no_grad()`` -> ``torch.no_grad``)."""
    names = []
    for d in fn.decorator_list:
        name = dotted_name(d.func if isinstance(d, ast.Call) else d)
        if name:
            names.append(name)
    return tuple(names)


def method_kind(decorators: tuple[str, ...]) -> str:
    """``property``, ``staticmethod``, ``classmethod`` or ``method`` (the catalogue's kinds)."""
    for d in decorators:
        last = d.rsplit(".", 1)[-1]
        if last in ("property", "cached_property", "setter", "getter", "deleter"):
            return "property"
        if last == "staticmethod":
            return "staticmethod"
        if last == "classmethod":
            return "classmethod"
    return "method"


def signature_of(fn: FunctionNode, kind: str | None = None) -> Signature:
    """The definition's signature in the catalogue's terms (defaults as source text)."""
    a = fn.args
    params: list[Param] = []
    positional = list(a.posonlyargs) + list(a.args)
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        param_kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        params.append(Param(arg.arg, param_kind, _default_text(default)))
    if a.vararg:
        params.append(Param(a.vararg.arg, "VAR_POSITIONAL"))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append(Param(arg.arg, "KEYWORD_ONLY", _default_text(default)))
    if a.kwarg:
        params.append(Param(a.kwarg.arg, "VAR_KEYWORD"))
    if kind is None:
        kind = method_kind(decorator_names(fn))
    return Signature(tuple(params), bound=kind != "staticmethod")


def _default_text(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and not isinstance(node.value, str):
        return repr(node.value)
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def param_names(fn: FunctionNode) -> tuple[str, ...]:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        names.append(a.vararg.arg)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return tuple(names)


def is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def body_without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    return body[1:] if body and is_docstring(body[0]) else body


_CONTEXT_MARKER = frozenset({"ctx"})


@cache
def node_fields(kind: type[ast.AST], skipped: frozenset[str] = _CONTEXT_MARKER) -> tuple[str, ...]:
    """The fields of an ``ast`` node type, in order, less ``skipped``: computed once per type for the
    walks that step through every node's children."""
    return tuple(f for f in kind._fields if f not in skipped)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes(node)`` as a list, in the same order, without the ``ctx`` marker
    (``Load``/``Store``) that every name, attribute and subscript carries: the narrowing walks visit
    each node's children, and a third of those children were markers."""
    out: list[ast.AST] = []
    for name in node_fields(type(node)):  # type: ignore[arg-type]  # typeshed: type[AST] is not Hashable
        child = getattr(node, name, None)
        if child is None:
            continue
        if isinstance(child, ast.AST):
            out.append(child)
        elif type(child) is list:
            out.extend(item for item in child if isinstance(item, ast.AST))
    return out


# -- statements and their lines ------------------------------------------------------------------
#
# ``ast`` gives no position to some nodes: ``match_case``, ``comprehension``, ``arguments`` and
# ``withitem`` (and ``keyword`` / ``alias`` before Python 3.9 / 3.10). Two of them hold statements
# (a ``match_case``, and an ``excepthandler``, which does have a position), so code that steps through
# nested blocks and assumes "a block member has ``lineno``" crashed on the first ``match`` statement
# (TW000 "'match_case' object has no attribute 'lineno'"). These helpers are the one place that knows.

#: nodes that hold statements in a ``body`` of their own without being statements
STATEMENT_HOLDERS: tuple[type[ast.AST], ...] = (ast.excepthandler, ast.match_case)


def nested_statements(stmt: ast.AST) -> list[ast.stmt]:
    """The statements directly inside a compound statement (or a module, handler or case), in
    source order: its body, the bodies of its ``except`` handlers and ``case`` clauses, ``else``,
    ``finally``. Empty for a simple statement."""
    out: list[ast.stmt] = list(getattr(stmt, "body", ()) or ())
    for holder in (*(getattr(stmt, "handlers", ()) or ()), *(getattr(stmt, "cases", ()) or ())):
        out += holder.body
    out += getattr(stmt, "orelse", ()) or ()
    out += getattr(stmt, "finalbody", ()) or ()
    return [s for s in out if isinstance(s, ast.stmt)]


def line_span(node: ast.AST) -> tuple[int, int] | None:
    """``(first, last)`` line of ``node``, decorators included; for a node without a position the span
    of what it holds (a ``case`` clause: its pattern to its last statement); ``None`` when nothing in
    it has a position. Iterative: no recursion limit on deep trees."""
    first = getattr(node, "lineno", None)
    if first is not None:
        decorators = getattr(node, "decorator_list", None)
        start = min(first, *(d.lineno for d in decorators)) if decorators else first
        return start, getattr(node, "end_lineno", None) or first
    low = high = None
    stack = child_nodes(node)
    while stack:
        child = stack.pop()
        line = getattr(child, "lineno", None)
        if line is None:
            stack.extend(child_nodes(child))
            continue
        end = getattr(child, "end_lineno", None) or line
        low = line if low is None else min(low, line)
        high = end if high is None else max(high, end)
    return None if low is None or high is None else (low, high)


def walk_expression(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node`` (itself included) without entering lambdas, comprehensions' own
    scopes are entered (their names are read in this scope's flow), nested defs and classes."""
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        current = pop()
        yield current
        for child in child_nodes(current):
            if not isinstance(child, _NOT_WALKED):
                push(child)


def char_column(line_text: str, byte_offset: int) -> int:
    """0-based character column of a UTF-8 byte offset that ``ast`` reports (ruff counts characters)."""
    if byte_offset <= 0 or line_text.isascii():
        return byte_offset
    return len(line_text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
