"""Shared extraction for the catalogue builders: module namespaces, star-import exports, class graphs,
dataclass fields, argument renames and statement fingerprints, read with ``ast`` from one release.

Used by the catalogue builders (``scripts/build_catalog.py``, ``scripts/build_trl_catalog.py``) and, at run
time, by :mod:`trainwright.catalog.additions` to cover a release newer than the shipped catalogue from its
installed source or a downloaded wheel: the same code both ways, so a release added by a user has exactly the
facts the builder would have shipped. Only ``ast`` reads the source; nothing is imported from it. Every fact is computed per release and then
merged into ``[first, last, value]`` release ranges (``merge_*``), the same convention as ``<library>.json``.

How names are resolved (:class:`Resolver`): each module's top-level statements are read once into a
namespace: ``class`` definitions, ``from X import a as b``, ``import X``, simple aliases ``A = B``,
``from X import *`` and ``__all__``. Statements under ``if``/``try`` count (first binding wins); the body of
``if TYPE_CHECKING:`` and ``except OptionalDependencyNotAvailable:`` handlers (dummy objects) do not. A
lazy package (``sys.modules[__name__] = _LazyModule(..., _import_structure, ...)``) exports the names
listed in its ``_import_structure`` (dict literal, ``[key] = [...]``, ``.extend``/``.append``/``+=``),
each resolved in its submodule; transformers' per-model structure (``define_import_structure(models)``,
4.52+) and the ``models.*`` keys of older releases are left out: no model class is a trainer, callback or
arguments class. A name imported from another distribution (TRL's ``from transformers import Trainer``)
resolves to ``<module>.<name>`` and is then canonicalised by the caller (``external``).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import sys
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainwright.catalog.fingerprint import NORMALISER_VERSION, fingerprint_set

# Class-name endings the linter cares about (exports and class graphs are restricted to them).
SUFFIXES = ("Trainer", "Callback", "Arguments", "Config", "Control", "State", "CallbackHandler")


def wanted(dotted: str) -> bool:
    return dotted.rpartition(".")[2].endswith(SUFFIXES)


# ------------------------------------------------------------------------------ shared with the builders


@functools.lru_cache(maxsize=16)
def parse_source(text: str) -> ast.Module:
    """``ast.parse``, shared: one release's extraction reads ``trainer.py`` (~6,000 lines) in four places,
    and parsing it once instead of four times is a third of a first run's cost. Trees are never mutated."""
    return ast.parse(text)


def class_body_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements of a class body, descending into ``if``/``try`` blocks (conditional definitions)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from class_body_statements(stmt.body)
            yield from class_body_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *[h.body for h in stmt.handlers]):
                yield from class_body_statements(block)
        else:
            yield stmt


# --------------------------------------------------------------------------------------------- package


class Package:
    """The ``.py`` files of one release of a distribution (a wheel or an unpacked package directory)."""

    def __init__(self, root: str, files: dict[str, Callable[[], bytes]]) -> None:
        self.root = root  # top-level package name: "transformers", "trl"
        self._files = files  # "transformers/trainer.py" -> reader
        self._trees: dict[str, ast.Module | None] = {}
        self._text: dict[str, str] = {}

    @classmethod
    def from_wheel(cls, wheel: Path, root: str) -> Package:
        zf = zipfile.ZipFile(wheel)
        names = [n for n in zf.namelist() if n.startswith(root + "/") and n.endswith(".py")]
        return cls(root, {n: (lambda n=n: zf.read(n)) for n in names})

    @classmethod
    def from_dir(cls, directory: Path) -> Package:
        directory = directory.resolve()
        root = directory.name
        files: dict[str, Callable[[], bytes]] = {}
        for path in sorted(directory.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = root + "/" + path.relative_to(directory).as_posix()
            files[rel] = lambda path=path: path.read_bytes()
        return cls(root, files)

    def file_of(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for candidate in (base + ".py", base + "/__init__.py"):
            if candidate in self._files:
                return candidate
        return None

    def is_package(self, module: str) -> bool:
        return module.replace(".", "/") + "/__init__.py" in self._files

    def has_module(self, module: str) -> bool:
        return self.file_of(module) is not None

    def modules(self, prefix: str | None = None) -> list[str]:
        out = []
        for name in self._files:
            dotted = name[:-3].replace("/", ".").removesuffix(".__init__")
            if prefix is None or dotted == prefix or dotted.startswith(prefix + "."):
                out.append(dotted)
        return sorted(out)

    def text(self, module: str) -> str | None:
        path = self.file_of(module)
        if path is None:
            return None
        if path not in self._text:
            self._text[path] = self._files[path]().decode("utf-8")
        return self._text[path]

    def tree(self, module: str) -> ast.Module | None:
        path = self.file_of(module)
        if path is None:
            return None
        if path not in self._trees:
            try:
                self._trees[path] = parse_source(self.text(module) or "")
            except SyntaxError:
                self._trees[path] = None
        return self._trees[path]


# ------------------------------------------------------------------------------------------ namespaces


@dataclass
class Binding:
    kind: str  # "class" | "import" | "alias" | "module" | "other"
    node: ast.ClassDef | None = None
    module: str | None = None  # "import": absolute source module
    name: str | None = None  # "import": the imported name
    expr: ast.expr | None = None  # "alias": the right-hand side


@dataclass
class Namespace:
    module: str
    bindings: dict[str, Binding] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)  # modules of ``from X import *``
    all_names: list[str] | None = None
    lazy: dict[str, str] | None = None  # name -> submodule key, for a ``_LazyModule`` package
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_missing_dependency(handler: ast.ExceptHandler) -> bool:
    names = []
    if handler.type is not None:
        for node in ast.walk(handler.type):
            if isinstance(node, ast.Name):
                names.append(node.id)
            elif isinstance(node, ast.Attribute):
                names.append(node.attr)
    return "OptionalDependencyNotAvailable" in names


def runtime_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Top-level statements that run at import, flattened through ``if``/``try``/``with`` blocks."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            if _is_type_checking(stmt.test):
                yield from runtime_statements(stmt.orelse)
            else:
                yield from runtime_statements(stmt.body)
                yield from runtime_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            yield from runtime_statements(stmt.body)
            for handler in stmt.handlers:
                if not _catches_missing_dependency(handler):
                    yield from runtime_statements(handler.body)
            yield from runtime_statements(stmt.orelse)
            yield from runtime_statements(stmt.finalbody)
        elif isinstance(stmt, ast.With):
            yield from runtime_statements(stmt.body)
        else:
            yield stmt


def _str_list(node: ast.expr | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def absolute(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def _import_structure(stmts: list[ast.stmt]) -> dict[str, list[str]] | None:
    """``_import_structure`` as built by the statements (``None`` when the module has none)."""
    structure: dict[str, list[str]] | None = None

    def key_of(node: ast.expr) -> str | None:
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "_import_structure"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            return node.slice.value
        return None

    for stmt in stmts:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and target.id == "_import_structure":
                if isinstance(stmt.value, ast.Dict):
                    structure = {}
                    for k, v in zip(stmt.value.keys, stmt.value.values):
                        if isinstance(k, ast.Constant) and isinstance(k.value, str):
                            structure[k.value] = _str_list(v) or []
                continue
            key = key_of(target)
            if key is not None and structure is not None:
                structure[key] = _str_list(stmt.value) or []
        elif isinstance(stmt, ast.AugAssign) and structure is not None:
            key = key_of(stmt.target)
            if key is not None:
                structure.setdefault(key, []).extend(_str_list(stmt.value) or [])
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and structure is not None:
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in ("extend", "append") and call.args:
                key = key_of(func.value)
                if key is not None:
                    if func.attr == "extend":
                        structure.setdefault(key, []).extend(_str_list(call.args[0]) or [])
                    elif isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
                        structure.setdefault(key, []).append(call.args[0].value)
    return structure


def _is_lazy(stmts: list[ast.stmt]) -> bool:
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name == "_LazyModule":
                    return True
    return False


def build_namespace(package: Package, module: str) -> Namespace | None:
    """What ``module`` binds at import time (classes, functions, imports, aliases, ``__all__``, and a lazy
    package's ``_import_structure``), or ``None`` when the package has no such module."""
    tree = package.tree(module)
    if tree is None:
        return None
    ns = Namespace(module)
    is_pkg = package.is_package(module)
    stmts = list(runtime_statements(tree.body))
    for stmt in stmts:
        _bind_statement(ns, stmt, module, is_pkg)
    if is_pkg and _is_lazy(stmts):
        structure = _import_structure(stmts) or {}
        ns.lazy = {}
        for key, names in structure.items():
            if key == "models" or key.startswith(("models.", "utils.dummy_")):
                continue
            for name in names:
                ns.lazy.setdefault(name, key)
    return ns


def _bind_statement(ns: Namespace, stmt: ast.stmt, module: str, is_pkg: bool) -> None:
    """Record what one top-level statement binds (the first binding of a name wins)."""
    bind = ns.bindings.setdefault
    if isinstance(stmt, ast.ClassDef):
        bind(stmt.name, Binding("class", node=stmt))
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        bind(stmt.name, Binding("other"))
        ns.functions.setdefault(stmt.name, stmt)
    elif isinstance(stmt, ast.ImportFrom):
        source = absolute(module, is_pkg, stmt.level, stmt.module)
        for alias in stmt.names:
            if alias.name == "*":
                ns.stars.append(source)
            else:
                bind(alias.asname or alias.name, Binding("import", module=source, name=alias.name))
    elif isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                bind(alias.asname, Binding("module", module=alias.name))
            else:
                head = alias.name.partition(".")[0]
                bind(head, Binding("module", module=head))
    elif isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                if target.id == "__all__":
                    ns.all_names = _str_list(stmt.value)
                elif isinstance(stmt.value, (ast.Name, ast.Attribute)):
                    bind(target.id, Binding("alias", expr=stmt.value))
                else:
                    bind(target.id, Binding("other"))
    elif isinstance(stmt, ast.AugAssign):
        if isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__" and ns.all_names is not None:
            ns.all_names.extend(_str_list(stmt.value) or [])
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        bind(stmt.target.id, Binding("other"))
    elif isinstance(stmt, ast.Expr) and ns.all_names is not None:
        _grow_all(ns.all_names, stmt.value)


def _grow_all(all_names: list[str], value: ast.expr) -> None:
    """``__all__.extend([...])`` / ``__all__.append("name")`` at module level."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "__all__"
    ):
        return
    if value.func.attr == "extend" and value.args:
        all_names.extend(_str_list(value.args[0]) or [])
    elif value.func.attr == "append" and value.args and isinstance(value.args[0], ast.Constant):
        all_names.append(value.args[0].value)


class Resolver:
    """Resolve names of one release's modules to the canonical dotted name of the class they denote."""

    def __init__(self, package: Package, external: Callable[[str], str] | None = None) -> None:
        self.package = package
        self.external = external or (lambda dotted: dotted)
        self._ns: dict[str, Namespace | None] = {}

    def namespace(self, module: str) -> Namespace | None:
        if module not in self._ns:
            self._ns[module] = None  # cycle guard while building
            self._ns[module] = build_namespace(self.package, module)
        return self._ns[module]

    def inside(self, module: str) -> bool:
        return module == self.package.root or module.startswith(self.package.root + ".")

    def resolve(self, module: str, name: str, _seen: frozenset[tuple[str, str]] = frozenset()) -> str | None:
        """Canonical ``pkg.module.Class`` that ``module.name`` denotes, ``None`` if it is not a class."""
        key = (module, name)
        if key in _seen:
            return None
        seen = _seen | {key}
        if not self.inside(module):
            return self.external(f"{module}.{name}")
        ns = self.namespace(module)
        if ns is None:
            return None
        binding = ns.bindings.get(name)
        if ns.lazy is not None and name in ns.lazy:
            return self.resolve(f"{module}.{ns.lazy[name]}", name, seen)
        if binding is None:
            for star in ns.stars:
                if name in self.star_names(star):
                    return self.resolve(star, name, seen)
            return None
        if binding.kind == "class":
            return f"{module}.{name}"
        if binding.kind == "import":
            assert binding.module is not None and binding.name is not None
            if self.inside(binding.module) and self.package.has_module(f"{binding.module}.{binding.name}"):
                return None  # a submodule, not a class
            return self.resolve(binding.module, binding.name, seen)
        if binding.kind == "alias":
            assert binding.expr is not None
            return self.resolve_expr(module, binding.expr, seen)
        return None

    def resolve_expr(
        self, module: str, expr: ast.expr, _seen: frozenset[tuple[str, str]] = frozenset()
    ) -> str | None:
        """A base-class expression (``Trainer``, ``transformers.Trainer``, ``mod.Class``) -> canonical."""
        if isinstance(expr, ast.Name):
            return self.resolve(module, expr.id, _seen)
        if isinstance(expr, ast.Attribute):
            parts: list[str] = []
            node: ast.expr = expr
            while isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            if not isinstance(node, ast.Name):
                return None
            parts.append(node.id)
            parts.reverse()
            ns = self.namespace(module)
            head = ns.bindings.get(parts[0]) if ns else None
            if head is not None and head.kind == "import" and head.module is not None:
                base = f"{head.module}.{head.name}"
            elif head is not None and head.kind == "module" and head.module is not None:
                base = head.module
            else:
                return None
            dotted_module = ".".join([base, *parts[1:-1]])
            return self.resolve(dotted_module, parts[-1], _seen)
        return None

    def star_names(self, module: str) -> list[str]:
        """The names ``from module import *`` binds (``__all__``, lazy structure, else public names)."""
        ns = self.namespace(module)
        if ns is None:
            return []
        if ns.all_names is not None:
            return list(ns.all_names)
        if ns.lazy is not None:
            return list(ns.lazy)
        names = [n for n in ns.bindings if not n.startswith("_")]
        for star in ns.stars:
            if star != module:
                names.extend(n for n in self.star_names(star) if n not in ns.bindings)
        return names

    def exports(self, module: str) -> dict[str, str]:
        """``name -> canonical class`` bound by ``from module import *``, restricted to :data:`SUFFIXES`."""
        out: dict[str, str] = {}
        ns = self.namespace(module)
        for name in self.star_names(module):
            if not name.endswith(SUFFIXES):
                # Only an alias can bind a wanted class under another name: ``X = ProgressCallback`` or
                # ``from m import FooCallback as X``; anything else is not resolved (keeps reads down).
                binding = ns.bindings.get(name) if ns is not None else None
                if binding is None or not (
                    binding.kind == "alias"
                    or (binding.kind == "import" and (binding.name or "").endswith(SUFFIXES))
                ):
                    continue
            target = self.resolve(module, name)
            if target is not None and wanted(target):
                out[name] = target
        return dict(sorted(out.items()))

    def class_node(self, canonical: str) -> ast.ClassDef | None:
        module, _, name = canonical.rpartition(".")
        if not self.inside(module):
            return None
        ns = self.namespace(module)
        binding = ns.bindings.get(name) if ns else None
        return binding.node if binding is not None and binding.kind == "class" else None

    def bases(self, canonical: str) -> list[str]:
        node = self.class_node(canonical)
        if node is None:
            return []
        module = canonical.rpartition(".")[0]
        out = []
        for base in node.bases:
            resolved = self.resolve_expr(module, base)
            out.append(resolved if resolved is not None else ast.unparse(base))
        return out

    def class_graph(self, seeds: Iterable[str]) -> dict[str, list[str]]:
        """``canonical -> [base canonical, ...]`` for ``seeds`` and every in-package class above them."""
        graph: dict[str, list[str]] = {}
        todo = list(seeds)
        while todo:
            cls = todo.pop()
            if cls in graph or self.class_node(cls) is None:
                continue
            graph[cls] = self.bases(cls)
            todo.extend(b for b in graph[cls] if b not in graph)
        return dict(sorted(graph.items()))

    def module_classes(self, module: str) -> list[str]:
        ns = self.namespace(module)
        if ns is None:
            return []
        return [f"{module}.{n}" for n, b in ns.bindings.items() if b.kind == "class"]


def reaches(graph: dict[str, list[str]], cls: str, roots: frozenset[str]) -> bool:
    seen: set[str] = set()
    todo = [cls]
    while todo:
        current = todo.pop()
        if current in roots:
            return True
        if current in seen:
            continue
        seen.add(current)
        todo.extend(graph.get(current, ()))
    return False


# ------------------------------------------------------------------------------------ dataclass fields


def dataclass_fields(node: ast.ClassDef) -> list[list[Any]]:
    """Own fields of a dataclass body: ``[[name, default_src|None, default_factory_src|None, init], ...]``.

    ``x: T = field(default=v)`` -> default ``v``; ``field(default_factory=f)`` -> factory ``f``;
    ``x: T = v`` -> default ``v``; ``x: T`` -> required. ``ClassVar``/``InitVar`` annotations are not fields.
    """
    out: list[list[Any]] = []
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        annotation = ast.unparse(stmt.annotation)
        if re.match(r"^(typing\.|dataclasses\.)?(ClassVar|InitVar)\b", annotation):
            continue
        default: str | None = None
        factory: str | None = None
        init = True
        value = stmt.value
        if isinstance(value, ast.Call) and (
            (isinstance(value.func, ast.Name) and value.func.id == "field")
            or (isinstance(value.func, ast.Attribute) and value.func.attr == "field")
        ):
            for kw in value.keywords:
                if kw.arg == "default":
                    default = ast.unparse(kw.value)
                elif kw.arg == "default_factory":
                    factory = ast.unparse(kw.value)
                elif kw.arg == "init" and isinstance(kw.value, ast.Constant):
                    init = bool(kw.value.value)
        elif value is not None:
            default = ast.unparse(value)
        out.append([stmt.target.id, default, factory, int(init)])
    return out


def field_help(node: ast.ClassDef) -> dict[str, str]:
    """``name -> metadata["help"]`` text of each field (for deprecation notes)."""
    out: dict[str, str] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        value = stmt.value
        if not isinstance(value, ast.Call):
            continue
        for kw in value.keywords:
            if kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    if isinstance(k, ast.Constant) and k.value == "help":
                        text = _string(v)
                        if text:
                            out[stmt.target.id] = text
    return out


def _string(node: ast.expr | None) -> str | None:
    """The literal text of a string expression (f-strings: their literal parts)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left), _string(node.right)
        return (left or "") + (right or "") if left is not None or right is not None else None
    return None


# ---------------------------------------------------------------------------------------------- renames

_USE_INSTEAD = re.compile(
    r"(?:[Uu]se|[Uu]sing|in favou?r of|alias for|[Pp]lease use|[Pp]ass)\s+`(?:--)?(?P<new>[A-Za-z_][A-Za-z0-9_]*)`"
    r"|the use of `(?:--)?(?P<new2>[A-Za-z_][A-Za-z0-9_]*)` is preferred"
)


def _messages(node: ast.AST) -> list[str]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            for arg in [*sub.args, *(k.value for k in sub.keywords)]:
                text = _string(arg)
                if text:
                    out.append(text)
    return out


def _mentioned(test: ast.expr, on_self: bool) -> set[str]:
    """Names a test refers to: ``self.x`` (fields) or ``x`` (parameters), and string constants."""
    out: set[str] = set()
    for sub in ast.walk(test):
        if on_self and isinstance(sub, ast.Attribute) and _is_self(sub.value):
            out.add(sub.attr)
        elif not on_self and isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.add(sub.value)
    return out


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def rename_evidence(
    function: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str], on_self: bool
) -> list[tuple[str, str, bool, str]]:
    """``(old, new, exact, note)`` pairs shown by one function's deprecation shims.

    Only code that warns about a deprecation counts. Exact (a one-to-one rename):
    ``@deprecate_kwarg("old", new_name="new")`` on the function; an ``if`` that tests ``old`` and assigns
    ``new = old`` (``self.new = self.old`` for dataclass fields) or, for a flag, ``if self.old:
    self.new = True``; a ``_DEPRECATED_PARAMS = {"old": "new"}`` table applied with ``setattr`` (unless
    the function special-cases ``"old"``, i.e. converts its value). Not exact: a warning under such an
    ``if`` that only says "use `new` instead". ``names`` are the parameter/field names that exist.
    """
    out = _decorator_renames(function)
    # ``{"old": "new", ...}`` tables applied with setattr (TRL's RLOOConfig.__post_init__ in 0.23).
    has_setattr = any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
        for n in ast.walk(function)
    )
    for node in ast.walk(function):
        if isinstance(node, ast.If):
            out.extend(_if_renames(function, node, names, on_self))
        elif (
            isinstance(node, ast.Assign)
            and has_setattr
            and isinstance(node.value, ast.Dict)
            and "DEPRECATED" in ast.unparse(node.targets[0]).upper()
        ):
            out.extend(_table_renames(function, node, node.value, names))
    return out


Rename = tuple[str, str, bool, str]


def _decorator_renames(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Rename]:
    """``@deprecate_kwarg("old", new_name="new")`` on ``function``: exact renames."""
    out: list[Rename] = []
    for deco in function.decorator_list:
        if (
            isinstance(deco, ast.Call)
            and getattr(deco.func, "id", getattr(deco.func, "attr", None)) == "deprecate_kwarg"
            and deco.args
            and isinstance(deco.args[0], ast.Constant)
        ):
            new = next((k.value for k in deco.keywords if k.arg == "new_name"), None)
            if isinstance(new, ast.Constant) and isinstance(new.value, str):
                out.append((deco.args[0].value, new.value, True, "@" + ast.unparse(deco)))
    return out


def _if_renames(
    function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.If, names: set[str], on_self: bool
) -> list[Rename]:
    """An ``if`` that tests ``old`` and warns about a deprecation: the assignments under it that copy
    ``old`` into ``new`` (exact), and the "use `new` instead" messages (not exact)."""
    out: list[Rename] = []
    messages = _messages(node)
    if not any("deprecat" in m.lower() for m in messages):
        return out  # ``if self.eval_steps is None: self.eval_steps = self.logging_steps`` is a default
    for old in sorted(_mentioned(node.test, on_self) & names):
        for sub in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                new = _assigned_rename(sub, node.test, old, on_self)
                if new is not None and new in names:
                    message = next((m for m in messages if old in m), "")
                    out.append((old, new, True, _note(function, ast.unparse(sub), message)))
        for message in messages:
            if old not in message or "deprecat" not in message.lower():
                continue
            for match in _USE_INSTEAD.finditer(message):
                new = match["new"] or match["new2"]
                if new and new != old and new in names:
                    out.append((old, new, False, _note(function, "", message)))
    return out


def _assigned_rename(sub: ast.Assign, test: ast.expr, old: str, on_self: bool) -> str | None:
    """``new`` when ``sub`` is ``new = old`` (``self.new = self.old``), or ``self.new = True`` under
    ``if self.old:`` (a boolean flag renamed); else ``None``."""
    target, value = sub.targets[0], sub.value
    flag = (
        isinstance(value, ast.Constant)
        and value.value is True
        and isinstance(test, ast.Attribute)
        and _is_self(test.value)
        and test.attr == old
    )
    if on_self:
        ok = (
            isinstance(target, ast.Attribute)
            and _is_self(target.value)
            and target.attr != old
            and ((isinstance(value, ast.Attribute) and _is_self(value.value) and value.attr == old) or flag)
        )
        return target.attr if ok else None  # type: ignore[union-attr]
    ok = isinstance(target, ast.Name) and isinstance(value, ast.Name) and value.id == old and target.id != old
    return target.id if ok else None  # type: ignore[union-attr]


def _table_renames(
    function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.Assign, table: ast.Dict, names: set[str]
) -> list[Rename]:
    """A ``_DEPRECATED_PARAMS = {"old": "new"}`` table applied with ``setattr``: exact unless the function
    special-cases ``"old"`` (``if old_param == "total_episodes": old_value //= ...``: converted, not renamed)."""
    pairs = [
        (k.value, v.value)
        for k, v in zip(table.keys, table.values)
        if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
    ]
    special = {
        c.value
        for n in ast.walk(function)
        if isinstance(n, ast.Compare) and any(isinstance(op, ast.Eq) for op in n.ops)
        for c in [n.left, *n.comparators]
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    }
    out: list[Rename] = []
    for old, new in pairs:
        if isinstance(old, str) and isinstance(new, str) and old in names and new in names:
            code = f"{ast.unparse(node.targets[0])}[{old!r}] = {new!r}; setattr(self, new, old)"
            out.append((old, new, old not in special, _note(function, code, "")))
    return out


def help_evidence(help_texts: dict[str, str], names: set[str]) -> list[tuple[str, str, bool, str]]:
    """``(old, new, False, note)`` from field help such as "Deprecated. Use `new` instead"."""
    out = []
    for old, text in sorted(help_texts.items()):
        if "eprecat" not in text and "preferred" not in text and "alias" not in text:
            continue
        for match in _USE_INSTEAD.finditer(text):
            new = match["new"] or match["new2"]
            if new and new != old and new in names:
                exact = match.group(0).startswith("alias for")  # "Deprecated alias for `new`."
                out.append((old, new, exact, f"help of `{old}`: {' '.join(text.split())}"))
    return out


def _note(function: ast.AST, code: str, message: str) -> str:
    name = getattr(function, "name", "?")
    parts = [f"{name}: `{code}`" if code else name]
    if message:
        parts.append(" ".join(message.split()))
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------- fingerprints


def method_nodes(cls: ast.ClassDef) -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every ``def`` of a class body by name (property setters and conditional definitions included)."""
    out: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for stmt in class_body_statements(cls.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(stmt.name, []).append(stmt)
    return out


def fingerprints_of(functions: Iterable[ast.FunctionDef | ast.AsyncFunctionDef]) -> list[str]:
    out: set[str] = set()
    for fn in functions:
        out |= fingerprint_set(fn)
    return sorted(out)


# --------------------------------------------------------------------------------------------- merging


def ranges(versions: list[str], value_at: Callable[[str], Any]) -> list[list[Any]]:
    """``[[first, last, value], ...]`` over consecutive versions with equal (non-``None``) values."""
    out: list[list[Any]] = []
    previous: Any = None
    for version in versions:
        value = value_at(version)
        if value is not None and out and value == previous:
            out[-1][1] = version  # ``previous`` is the value at the version just before: a run continues
        elif value is not None:
            out.append([version, version, value])
        previous = value
    return out


def merge_fingerprints(
    library: str,
    generator: str,
    versions: list[str],
    per_release: dict[str, dict[tuple[str, str], list[str]]],
) -> dict[str, Any]:
    """``{version: {(class, method): [fp, ...]}}`` -> the ``<library>-fingerprints.json`` document.

    ``methods``: ``[[class, method, [[first, last], ...]], ...]`` sorted, the ranges where it is defined.
    ``statements``: ``{fp: [method_index, first_index, last_index, ...]}`` (flat triples, version indices
    into ``versions``), i.e. for every fingerprint the methods and release ranges it occurs in.
    """
    index = {v: i for i, v in enumerate(versions)}
    keys = sorted({k for rel in per_release.values() for k in rel})
    methods = []
    statements: dict[str, list[int]] = {}
    for m, key in enumerate(keys):
        present = [
            [a, b] for a, b, _ in ranges(versions, lambda v, key=key: True if key in per_release[v] else None)
        ]
        methods.append([key[0], key[1], present])
        fps = sorted({fp for v in versions for fp in per_release[v].get(key, ())})
        sets = {v: set(per_release[v].get(key, ())) for v in versions}
        for fp in fps:
            for a, b, _ in ranges(versions, lambda v, fp=fp, sets=sets: True if fp in sets[v] else None):
                statements.setdefault(fp, []).extend([m, index[a], index[b]])
    return {
        "format": 1,
        "generator": generator,
        "library": library,
        "normaliser": NORMALISER_VERSION,
        "versions": versions,
        "methods": methods,
        "statements": dict(sorted(statements.items())),
    }


def merge_modules(
    library: str, generator: str, versions: list[str], per_release: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Per-release ``{"exports": {module: {name: canonical}}, "classes": {canonical: [bases]}}`` -> ranges."""
    modules = sorted({m for rel in per_release.values() for m in rel["exports"]})
    exports: dict[str, Any] = {}
    for module in modules:
        names = sorted({n for rel in per_release.values() for n in rel["exports"].get(module, {})})
        exports[module] = {
            name: ranges(versions, lambda v, m=module, n=name: per_release[v]["exports"].get(m, {}).get(n))
            for name in names
        }
    class_names = sorted({c for rel in per_release.values() for c in rel["classes"]})
    classes = {
        cls: ranges(versions, lambda v, c=cls: per_release[v]["classes"].get(c)) for cls in class_names
    }
    return {
        "format": 1,
        "generator": generator,
        "library": library,
        "versions": versions,
        "exports": exports,
        "classes": classes,
    }


def merge_arguments(
    library: str,
    generator: str,
    versions: list[str],
    per_release: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Per-release ``{"fields": {cls: [[name, default, factory, init], ...]}, "renames": [...]}`` -> ranges.

    ``renames`` per release: ``(cls, old, new, exact, note)``; merged to one entry per (cls, old, new) with
    ``exact`` true if any release shows a one-to-one shim, and the evidence of the first release that
    shows it (``[version, note]``).
    """
    class_names = sorted({c for rel in per_release.values() for c in rel["fields"]})
    fields = {cls: ranges(versions, lambda v, c=cls: per_release[v]["fields"].get(c)) for cls in class_names}
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for v in versions:
        for cls, old, new, exact, note in per_release[v]["renames"]:
            entry = merged.setdefault(
                (cls, old, new), {"cls": cls, "old": old, "new": new, "exact": False, "evidence": []}
            )
            if exact and not entry["exact"]:
                entry["exact"] = True
                entry["evidence"] = [v, note]
            elif not entry["evidence"]:
                entry["evidence"] = [v, note]
            entry.setdefault("seen", []).append(v)
    renames = []
    for key in sorted(merged):
        entry = merged[key]
        seen = entry.pop("seen")
        entry["shim"] = [
            [a, b] for a, b, _ in ranges(versions, lambda v, s=set(seen): True if v in s else None)
        ]
        renames.append(entry)
    return {
        "format": 1,
        "generator": generator,
        "library": library,
        "versions": versions,
        "fields": fields,
        "renames": renames,
    }


def write_json(path: Path, data: dict[str, Any]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    return path.stat().st_size


def sibling(out: Path, fact: str) -> Path:
    """``data/transformers.json`` -> ``data/transformers-<fact>.json``."""
    return out.with_name(f"{out.stem}-{fact}.json")


def write_facts(
    out: Path, package: str, generator: str, versions: list[str], release_facts: dict[str, dict[str, Any]]
) -> None:
    """Write ``<stem>-fingerprints.json``, ``<stem>-modules.json`` and ``<stem>-arguments.json`` next to
    ``out``, merged over ``versions`` from each release's facts (both catalogue builders' last step)."""
    documents = {
        "fingerprints": merge_fingerprints(
            package, generator, versions, {v: f["fingerprints"] for v, f in release_facts.items()}
        ),
        "modules": merge_modules(
            package, generator, versions, {v: f["modules"] for v, f in release_facts.items()}
        ),
        "arguments": merge_arguments(
            package, generator, versions, {v: f["arguments"] for v, f in release_facts.items()}
        ),
    }
    for fact, document in documents.items():
        path = sibling(out, fact)
        size = write_json(path, document)
        print(f"wrote {path} ({size} bytes)", file=sys.stderr)
