"""What a module says about itself, read in one pass over its module- and class-level statements.

A ``ModuleSummary`` holds the names the module binds (imports, classes, simple aliases), its star
imports and ``__all__``, and every class with its base expressions and its method table (kind,
decorators, signature, lines). Method *bodies* are not read here: that is the analyses' job, done
lazily and only for the classes the rules look at, because bodies are most of a trainer file and
reading them all would cost more than parsing.

Summaries are plain picklable data: the CLI builds them in worker processes.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from trainwright.catalog import Signature
from trainwright_lint.syntax import (
    FUNCTION_TYPES,
    decorator_names,
    dotted_name,
    method_kind,
    nested_statements,
    signature_of,
)
from trainwright_lint.textscan import LiteralScan, class_statements

# Where a binding came from: candidates of a name are kept in source order with this context, so
# that ``try: from trl import X / except ImportError: from .compat import X`` keeps both.
PLAIN = ""
GUARDED = "guarded"  # under try/except/if at module level
TYPE_CHECKING = "type-checking"

IMPORT_MODULE = "module"  # import a.b.c as d  /  import a
IMPORT_FROM = "from"  # from a.b import c
CLASS = "class"  # class c: ...
ALIAS = "alias"  # c = a.b.C


@dataclass(frozen=True, slots=True)
class Binding:
    """How a module-level name gets its value (an import, an alias, a class), for resolving bases
    the way Python's import rules would."""

    kind: str
    module: str  # IMPORT_*: the dotted module ("" for ``from . import x``); ALIAS: the dotted value
    name: str  # IMPORT_FROM: the imported name; CLASS: the qualname; else ""
    level: int
    line: int
    context: str = PLAIN


@dataclass(frozen=True, slots=True)
class MethodSummary:
    """A method's shape without its body: enough to decide overrides and signature checks across
    files without keeping another file's tree."""

    name: str
    line: int  # the ``def`` line
    col: int
    end_line: int
    first_line: int  # the first decorator's line (or the def line)
    kind: str  # method / property / staticmethod / classmethod
    decorators: tuple[str, ...]
    signature: Signature
    is_async: bool
    # ``__init__`` only: the string keys it removes from its ``**kwargs`` (``kwargs.pop("beta")``,
    # ``del kwargs["x"]``): keywords a caller may pass that the base never sees (TW304).
    kwargs_keys: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ClassSummary:
    """A class's bases (as written) and method table: what the project model resolves MROs from."""

    qualname: str
    name: str
    line: int
    col: int
    end_line: int
    bases: tuple[str, ...]  # dotted source text of each base ("" when not a plain name)
    methods: dict[str, MethodSummary]
    class_attributes: frozenset[str]  # names assigned in the class body
    decorators: tuple[str, ...]
    importable: bool  # defined at module level (or in a class), not inside a function
    # For a class defined in a function: the names that function imports (``from transformers import
    # TrainerCallback`` inside ``main()``), which its bases may use.
    scope_bindings: dict[str, tuple[Binding, ...]] = field(default_factory=dict)


@dataclass
class ModuleSummary:
    """What other files need to know about one module (names, star imports, classes): small enough
    to send between processes, so the project model never needs another file's tree."""

    path: str
    bindings: dict[str, tuple[Binding, ...]]
    stars: tuple[tuple[str, int, int], ...]  # (module, level, line) of ``from m import *``
    all_names: tuple[str, ...] | None
    classes: dict[str, ClassSummary]  # by qualname; function-local ones keyed "f.<locals>.C"
    mentions: frozenset[str] = field(default_factory=frozenset)  # gate words found in the text
    # ``trainer.tokenizer = tok`` outside a class: (attribute, receiver name, the class the receiver
    # was built from in this file if a ``receiver = Cls(...)`` says so, else "").
    instance_stores: tuple[tuple[str, str, str], ...] = ()

    def class_named(self, name: str) -> ClassSummary | None:
        found = self.classes.get(name)
        return found if found is not None and found.importable else None


_RECEIVER = re.compile(r"(\w+)$")


def kwargs_keys_taken(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """String keys removed from the function's ``**kwargs`` dict (``kwargs.pop("x")``,
    ``del kwargs["x"]``) before it is passed on; a ``kwargs.get("x")`` leaves the key in place."""
    if fn.args.kwarg is None:
        return frozenset()
    name = fn.args.kwarg.arg
    keys: list[ast.expr] = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and node.func.attr == "pop"
            and node.args
        ):
            keys.append(node.args[0])
        elif isinstance(node, ast.Delete):
            keys += [
                t.slice
                for t in node.targets
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
            ]
    return frozenset(k.value for k in keys if isinstance(k, ast.Constant) and isinstance(k.value, str))


class _Summariser:
    def __init__(self, path: str) -> None:
        self.path = path
        self.bindings: dict[str, list[Binding]] = {}
        self.stars: list[tuple[str, int, int]] = []
        self.all_names: list[str] | None = None
        self.all_dynamic = False
        self.classes: dict[str, ClassSummary] = {}

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    # -- module level ----------------------------------------------------------------------------

    def module_block(self, body: list[ast.stmt], context: str) -> None:
        for stmt in body:
            self.module_statement(stmt, context)

    def module_statement(self, stmt: ast.stmt, context: str) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.bind(alias.asname, Binding(IMPORT_MODULE, alias.name, "", 0, stmt.lineno, context))
                else:
                    head = alias.name.split(".", 1)[0]
                    self.bind(head, Binding(IMPORT_MODULE, head, "", 0, stmt.lineno, context))
        elif isinstance(stmt, ast.ImportFrom):
            module = stmt.module or ""
            for alias in stmt.names:
                if alias.name == "*":
                    self.stars.append((module, stmt.level, stmt.lineno))
                    continue
                local = alias.asname or alias.name
                self.bind(local, Binding(IMPORT_FROM, module, alias.name, stmt.level, stmt.lineno, context))
        elif isinstance(stmt, ast.ClassDef):
            self.class_def(stmt, "", importable=True)
            self.bind(stmt.name, Binding(CLASS, "", stmt.name, 0, stmt.lineno, context))
        elif isinstance(stmt, ast.Assign):
            self.assignment(stmt.targets, stmt.value, stmt.lineno, context)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assignment([stmt.target], stmt.value, stmt.lineno, context)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
                self.extend_all(stmt.value)
        elif isinstance(stmt, ast.If):
            inner = TYPE_CHECKING if _is_type_checking(stmt.test) else GUARDED
            self.module_block(stmt.body, inner)
            self.module_block(stmt.orelse, GUARDED)
        elif isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar)):
            self.module_block(stmt.body, GUARDED)
            for handler in stmt.handlers:
                self.module_block(handler.body, GUARDED)
            self.module_block(stmt.orelse, GUARDED)
            self.module_block(stmt.finalbody, context)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self.module_block(stmt.body, context)
        elif isinstance(stmt, ast.Match):  # each case may or may not run, like the branches of an if
            for case in stmt.cases:
                self.module_block(case.body, GUARDED)

    def assignment(self, targets: list[ast.expr], value: ast.expr, line: int, context: str) -> None:
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if target.id == "__all__":
                self.all_names = []
                self.extend_all(value)
                continue
            candidates = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            for candidate in candidates:
                dotted = dotted_name(candidate)
                if dotted is not None:
                    self.bind(target.id, Binding(ALIAS, dotted, "", 0, line, context))

    def extend_all(self, value: ast.expr) -> None:
        if isinstance(value, (ast.List, ast.Tuple)):
            names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(names) != len(value.elts):
                self.all_dynamic = True
            self.all_names = (self.all_names or []) + names
        else:
            self.all_dynamic = True

    # -- classes -----------------------------------------------------------------------------------

    def class_def(
        self,
        node: ast.ClassDef,
        prefix: str,
        importable: bool,
        scope: dict[str, tuple[Binding, ...]] | None = None,
    ) -> None:
        qualname = f"{prefix}{node.name}"
        methods: dict[str, MethodSummary] = {}
        attributes: set[str] = set()
        for stmt in node.body:
            if isinstance(stmt, FUNCTION_TYPES):
                decorators = decorator_names(stmt)
                kind = method_kind(decorators)
                first = stmt.decorator_list[0].lineno if stmt.decorator_list else stmt.lineno
                methods[stmt.name] = MethodSummary(
                    name=stmt.name,
                    line=stmt.lineno,
                    col=stmt.col_offset,
                    end_line=stmt.end_lineno or stmt.lineno,
                    first_line=first,
                    kind=kind,
                    decorators=decorators,
                    signature=signature_of(stmt, kind),
                    is_async=isinstance(stmt, ast.AsyncFunctionDef),
                    kwargs_keys=kwargs_keys_taken(stmt) if stmt.name == "__init__" else frozenset(),
                )
            elif isinstance(stmt, ast.ClassDef):
                self.class_def(stmt, qualname + ".", importable)
            elif isinstance(stmt, ast.Assign):
                attributes.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                attributes.add(stmt.target.id)
        bases = tuple(dotted_name(b) or "" for b in node.bases)
        self.classes.setdefault(
            qualname,
            ClassSummary(
                qualname=qualname,
                name=node.name,
                line=node.lineno,
                col=node.col_offset,
                end_line=node.end_lineno or node.lineno,
                bases=bases,
                methods=methods,
                class_attributes=frozenset(attributes),
                decorators=decorator_names(node),
                importable=importable,
                scope_bindings=scope or {},
            ),
        )

    def local_classes(self, tree: ast.Module, wanted: set[int]) -> None:
        """Classes defined inside functions (factories): not importable, still linted. Only the
        statements whose line span holds one of the ``wanted`` class lines are entered."""
        Scope = dict[str, tuple[Binding, ...]]
        stack: list[tuple[ast.AST, str, Scope]] = [(tree, "", {})]
        while stack and wanted:
            node, prefix, scope = stack.pop()
            for child in nested_statements(node):  # through except handlers and case clauses too
                start, end = child.lineno, child.end_lineno or child.lineno
                if not any(start <= w <= end for w in wanted):
                    continue
                if isinstance(child, ast.ClassDef) and child.lineno in wanted and prefix:
                    wanted.discard(child.lineno)
                    self.class_def(child, prefix, importable=False, scope=scope)
                    continue
                if isinstance(child, FUNCTION_TYPES):
                    stack.append(
                        (child, f"{prefix}{child.name}.<locals>.", {**scope, **_function_imports(child)})
                    )
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}.", scope))
                else:
                    stack.append((child, prefix, scope))

    def result(
        self, mentions: frozenset[str], stores: tuple[tuple[str, str, str], ...] = ()
    ) -> ModuleSummary:
        return ModuleSummary(
            path=self.path,
            bindings={k: tuple(v) for k, v in self.bindings.items()},
            stars=tuple(self.stars),
            all_names=None if self.all_names is None or self.all_dynamic else tuple(self.all_names),
            classes=self.classes,
            mentions=mentions,
            instance_stores=stores,
        )


_NEWLINE = re.compile(r"\r\n|\r|\n")


def lines_of_offsets(source: str, offsets: list[int]) -> list[int]:
    """1-based line numbers (as ``ast`` counts them: ``\r\n``, ``\r`` and ``\n`` all end a line) of
    character offsets into ``source``."""
    if not offsets:
        return []
    breaks = [m.end() for m in _NEWLINE.finditer(source)]
    return [bisect_right(breaks, o) + 1 for o in offsets]


def _function_imports(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[Binding, ...]]:
    """The imports a function makes at its own level (and in its if/try blocks)."""
    return import_bindings(s for s in _own_statements(fn.body) if isinstance(s, (ast.Import, ast.ImportFrom)))


def import_bindings(imports: Iterable[ast.Import | ast.ImportFrom]) -> dict[str, tuple[Binding, ...]]:
    """The names ``imports`` bind inside a function (a scope for ``ProjectModel.resolve``), as the
    module-level summary would bind them under a guard."""
    inner = _Summariser("")
    for stmt in imports:
        inner.module_statement(stmt, GUARDED)
    return {k: tuple(v) for k, v in inner.bindings.items()}


def _own_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (FUNCTION_TYPES, ast.ClassDef)):
            continue
        out += _own_statements(nested_statements(stmt))
    return out


def _is_type_checking(test: ast.expr) -> bool:
    name = dotted_name(test)
    return name is not None and name.rsplit(".", 1)[-1] == "TYPE_CHECKING"


def summarise(
    tree: ast.Module, path: str, source: str, words: tuple[str, ...] = (), tracked: tuple[str, ...] = ()
) -> ModuleSummary:
    """The module's summary. ``source`` locates classes nested in functions without walking every
    function body; ``words`` are the gate words to record as mentioned (cross-file expansion);
    ``tracked`` the attributes whose stores on an instance the enabled rules ask for (a rule's
    ``TRACKED_ATTRIBUTES``: this module knows no rule)."""
    s = _Summariser(path)
    s.module_block(tree.body, PLAIN)
    found = {c.line for c in s.classes.values()}
    starts = list(class_statements(source))
    wanted = set(lines_of_offsets(source, starts)) - found if len(starts) > len(found) else set()
    if wanted:
        s.local_classes(tree, wanted)
    return s.result(frozenset(w for w in words if w in source), instance_stores(source, tracked))


@cache
def _store_scans(tracked: tuple[str, ...]) -> tuple[tuple[str, LiteralScan], ...]:
    return tuple((a, LiteralScan(f".{a}", r"\s*=(?!=)")) for a in tracked)


def instance_stores(source: str, tracked: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """``x.<attr> = ...`` statements (any scope) for each ``attr`` of ``tracked`` (``x.tokenizer =
    tok`` for TW303), with the class ``x`` was built from if the file says ``x = SomeClass(...)``;
    found in the text, so no function body is walked."""
    if not any(a in source for a in tracked):
        return ()
    out = []
    stores = sorted((at, attr) for attr, scan in _store_scans(tracked) for at, _ in scan.finditer(source))
    for at, attr in stores:
        before = _RECEIVER.search(source, max(0, at - 80), at)
        receiver = before.group(1) if before else ""
        if receiver in ("", "self"):
            continue
        built = re.search(rf"\b{re.escape(receiver)}\s*=\s*([\w.]+)\s*\(", source)
        out.append((attr, receiver, built.group(1) if built else ""))
    return tuple(out)
