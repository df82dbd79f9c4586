"""Import, alias and base-class resolution, within one file and across the files of a project.

A module is summarised (``summarise``) into its import map and its classes with their bases resolved
to dotted names (``from transformers import Trainer as HF`` makes ``HF`` mean
``transformers.Trainer``; ``import transformers as tf`` makes ``tf.Trainer`` mean the same).
``ProjectIndex`` holds the summaries and answers "is this class a Trainer subclass / a callback?"
transitively through project classes in other files (``from .base import MyBaseTrainer``). Modules
it does not hold yet are read on demand through a loader (the CLI knows every discovered file; the
flake8 plugin looks for sibling modules of the linted file's package).

Summaries are plain picklable data so the CLI can build them in worker processes.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

TRAINER = "trainer"
CALLBACK = "callback"
MIXIN = "mixin"

# Third-party libraries whose ``*Trainer`` classes are Trainer subclasses (setfit's is not built on
# transformers.Trainer: its subclasses get the rules that need no transformers catalogue only).
_TRAINER_LIBRARIES = {"trl": "Trainer", "sentence_transformers": "Trainer", "setfit": None}
_CATALOGUED_LIBRARIES = frozenset({"trl"})  # trainwright.catalog has data/<library>.json for these
_CALLBACK_LIBRARIES = frozenset({"transformers", "trl", "trainwright", "sentence_transformers", "setfit"})


@dataclass(frozen=True)
class ClassSummary:
    name: str
    lineno: int
    bases: tuple[str, ...]  # dotted names; "?Name" when a bare name could not be resolved
    methods: frozenset[str]
    sets_tokenizer: bool  # assigns self.tokenizer somewhere (then reading it is not TW303)


@dataclass
class ModuleSummary:
    module: str
    path: str
    is_package: bool
    imports: dict[str, str]
    classes: dict[str, ClassSummary]


@dataclass(frozen=True)
class Kind:
    """What a class is: ``role`` trainer/callback/mixin (None: neither)."""

    role: str | None
    catalog_cls: str | None = None  # "Trainer" / "Seq2SeqTrainer"; None: no transformers catalogue applies
    chain: tuple[str, ...] = ()  # project classes (dotted) between this class and the library base
    third_party: bool = False  # a non-transformers library class (TRL, ...) sits in between
    library: str | None = None  # that library when it has a catalogue ("trl")
    library_cls: str | None = None  # its class in the chain ("GRPOTrainer")


NOT_TARGET = Kind(None)


# --------------------------------------------------------------------------------------------------
# Summaries


def dotted_name(node: ast.AST) -> str | None:
    """``a.b.c`` for Name/Attribute chains, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _package_of(module: str, is_package: bool) -> list[str]:
    parts = module.split(".") if module else []
    return parts if is_package else parts[:-1]


def import_map(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Local name -> dotted target, for every import anywhere in the module (try/except imports too)."""
    result: dict[str, str] = {}
    package = _package_of(module, is_package)
    for node in _walk_outside_functions(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    result[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    result.setdefault(head, head)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                keep = len(package) - (node.level - 1)
                if keep <= 0:  # above the top-level package: not resolvable
                    continue
                base_parts = package[:keep] + ([node.module] if node.module else [])
                source = ".".join(p for p in base_parts if p)
            else:
                source = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                result[local] = f"{source}.{alias.name}" if source else alias.name
    return result


def _walk_outside_functions(tree: ast.AST) -> list[ast.AST]:
    """Statements reachable without entering function bodies (module level, if/try blocks, classes):
    what decides the names a class statement's bases refer to."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        for name in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(node, name, ()) or ():
                if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    stack.append(child)
    return out


def resolve_expr(
    node: ast.AST, module: str, imports: dict[str, str], local_classes: Iterable[str]
) -> str | None:
    if isinstance(node, ast.Subscript):  # Generic[T], SomeTrainer[Config]
        node = node.value
    name = dotted_name(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if head in imports:
        target = imports[head]
        return f"{target}.{rest}" if rest else target
    if head in local_classes:
        return f"{module}.{name}" if module else name
    return "?" + name


def _sets_tokenizer(cls: ast.ClassDef) -> bool:
    for node in ast.walk(cls):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            if (
                isinstance(t, ast.Attribute)
                and t.attr == "tokenizer"
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
            ):
                return True
    return False


def summarise(
    tree: ast.Module, module: str, path: str, is_package: bool = False, source: str | None = None
) -> ModuleSummary:
    """Imports and classes of a module (classes inside functions are not importable: left out)."""
    imports = import_map(tree, module, is_package)
    class_nodes = [n for n in _walk_outside_functions(tree) if isinstance(n, ast.ClassDef)]
    maybe_tokenizer = source is None or "self.tokenizer" in source
    local = {c.name for c in class_nodes}
    classes: dict[str, ClassSummary] = {}
    for c in class_nodes:
        bases = tuple(b for b in (resolve_expr(x, module, imports, local) for x in c.bases) if b)
        methods = frozenset(s.name for s in c.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        sets_tok = maybe_tokenizer and _sets_tokenizer(c)
        classes.setdefault(c.name, ClassSummary(c.name, c.lineno, bases, methods, sets_tok))
    return ModuleSummary(module, path, is_package, imports, classes)


# --------------------------------------------------------------------------------------------------
# Module names from paths


@lru_cache(maxsize=4096)
def _is_package_dir(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def module_name_for(path: str | os.PathLike[str]) -> tuple[str, bool, str]:
    """(dotted module name, is_package, import root directory) from the ``__init__.py`` chain."""
    p = Path(os.path.abspath(path))
    is_package = p.name == "__init__.py"
    parts = [] if is_package else [p.stem]
    directory = p.parent
    while _is_package_dir(str(directory)):
        parts.insert(0, directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    if is_package and not parts:
        parts = [p.parent.name]
    return ".".join(parts), is_package, str(directory)


# --------------------------------------------------------------------------------------------------
# The index

Loader = Callable[[str], "ModuleSummary | None"]


def _external_kind(dotted: str, extra_bases: tuple[str, ...], transformers_only: bool) -> Kind | None:
    """Library classes recognised by name (no source needed).

    ``transformers_only``: the first pass, before project sources are consulted, recognises only
    transformers' classes and configured extra bases; other libraries' classes are recognised by name
    only when their source is not part of the linted project (so linting TRL itself follows TRL's
    real class graph).
    """
    plain = dotted.lstrip("?")
    last = plain.rsplit(".", 1)[-1]
    for extra in extra_bases:
        if plain == extra or plain.endswith("." + extra) or last == extra:
            return Kind(TRAINER, "Trainer")
    if dotted.startswith("?"):
        return None
    root = plain.split(".", 1)[0]
    if root == "transformers":
        if last == "Seq2SeqTrainer":
            return Kind(TRAINER, "Seq2SeqTrainer")
        if last == "Trainer":
            return Kind(TRAINER, "Trainer")
        if last.endswith("Callback"):
            return Kind(CALLBACK)
        return None
    if transformers_only:
        return None
    if root in _TRAINER_LIBRARIES and last.endswith("Trainer"):
        catalogued = root if root in _CATALOGUED_LIBRARIES else None
        return Kind(
            TRAINER,
            _TRAINER_LIBRARIES[root],
            third_party=True,
            library=catalogued,
            library_cls=last if catalogued else None,
        )
    if root in _CALLBACK_LIBRARIES and last.endswith("Callback"):
        return Kind(CALLBACK)
    return None


@dataclass
class ProjectIndex:
    modules: dict[str, ModuleSummary] = field(default_factory=dict)
    loader: Loader | None = None
    extra_bases: tuple[str, ...] = ()
    _kinds: dict[str, Kind] = field(default_factory=dict)
    _failed_loads: set[str] = field(default_factory=set)
    _mixin_cache: tuple[int, dict[str, Kind]] | None = None

    def add(self, summary: ModuleSummary) -> None:
        self.modules[summary.module] = summary
        self._kinds.clear()
        self._mixin_cache = None

    def _module(self, name: str) -> ModuleSummary | None:
        found = self.modules.get(name)
        if found is None and self.loader is not None and name not in self._failed_loads:
            found = self.loader(name)
            if found is None:
                self._failed_loads.add(name)
            else:
                self.modules[name] = found
        return found

    def lookup(self, dotted: str, depth: int = 0) -> tuple[ModuleSummary, ClassSummary] | None:
        """Find a project class by dotted name, following re-exports (``from .base import X``)."""
        if dotted.startswith("?") or depth > 8:
            return None
        module_name, _, attr = dotted.rpartition(".")
        if not module_name:
            return None
        summary = self._module(module_name)
        if summary is None:
            # "pkg.mod.Outer.Inner" or a dotted import path: try one level up.
            return None
        cls = summary.classes.get(attr)
        if cls is not None:
            return summary, cls
        target = summary.imports.get(attr)
        if target and target != dotted:
            return self.lookup(target, depth + 1)
        return None

    def classify(self, dotted: str) -> Kind:
        """The kind of the class named ``dotted`` (library or project class)."""
        cached = self._kinds.get(dotted)
        if cached is not None:
            return cached
        self._kinds[dotted] = NOT_TARGET  # cycle guard
        kind = _external_kind(dotted, self.extra_bases, transformers_only=True)
        if kind is None:
            found = self.lookup(dotted)
            if found is not None:
                summary, cls = found
                kind = self.classify_bases(cls.bases, own=f"{summary.module}.{cls.name}")
            else:
                kind = _external_kind(dotted, self.extra_bases, transformers_only=False) or NOT_TARGET
        self._kinds[dotted] = kind
        return kind

    def classify_bases(self, bases: Iterable[str], own: str | None = None) -> Kind:
        """Kind of a class with these (resolved) bases; trainer wins over callback."""
        best = NOT_TARGET
        for base in bases:
            k = self.classify(base)
            if k.role == TRAINER:
                chain = ((own,) if own else ()) + k.chain
                return Kind(TRAINER, k.catalog_cls, chain, k.third_party, k.library, k.library_cls)
            if k.role == CALLBACK and best.role is None:
                best = Kind(CALLBACK, None, ((own,) if own else ()) + k.chain)
        return best

    def class_kind(self, summary: ModuleSummary, cls: ClassSummary) -> Kind:
        """Kind of a class of a summarised module, mixins of project Trainer subclasses included."""
        kind = self.classify(f"{summary.module}.{cls.name}")
        if kind.role is not None:
            return kind
        return self._mixins().get(f"{summary.module}.{cls.name}", NOT_TARGET)

    def target_classes(self, summary: ModuleSummary) -> list[str]:
        """Names of the classes of ``summary`` that are Trainer subclasses, mixins of one, or callbacks
        (by their own bases, so two files with the same module name do not mix)."""
        mixins = self._mixins()
        return [
            cls.name
            for cls in summary.classes.values()
            if self.classify_bases(cls.bases).role is not None or f"{summary.module}.{cls.name}" in mixins
        ]

    def _mixins(self) -> dict[str, Kind]:
        cached = self._mixin_cache
        if cached is not None and cached[0] == len(self.modules):
            return cached[1]
        mixins: dict[str, Kind] = {}
        for summary in list(self.modules.values()):
            for cls in summary.classes.values():
                kind = self.classify(f"{summary.module}.{cls.name}")
                if kind.role != TRAINER:
                    continue
                for base in cls.bases:
                    self._collect_mixin(base, kind, mixins, 0)
        self._mixin_cache = (len(self.modules), mixins)
        return mixins

    def _collect_mixin(self, base: str, kind: Kind, out: dict[str, Kind], depth: int) -> None:
        if depth > 5 or self.classify(base).role is not None:
            return
        found = self.lookup(base)
        if found is None:
            return
        summary, cls = found
        name = f"{summary.module}.{cls.name}"
        if name in out:
            return
        out[name] = Kind(MIXIN, kind.catalog_cls, (), kind.third_party, kind.library, kind.library_cls)
        for b in cls.bases:
            self._collect_mixin(b, kind, out, depth + 1)

    def project_methods(self, chain: tuple[str, ...]) -> tuple[frozenset[str], bool]:
        """Methods defined by the project classes of ``chain`` (excluding the first), and whether any
        of them assigns ``self.tokenizer``."""
        methods: set[str] = set()
        sets_tok = False
        for dotted in chain[1:]:
            found = self.lookup(dotted)
            if found is not None:
                methods |= found[1].methods
                sets_tok = sets_tok or found[1].sets_tokenizer
        return frozenset(methods), sets_tok


# --------------------------------------------------------------------------------------------------
# Loaders


@lru_cache(maxsize=512)
def _summarise_file(path: str, mtime: float) -> ModuleSummary | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        tree = ast.parse(data, filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
    module, is_package, _ = module_name_for(path)
    return summarise(tree, module, path, is_package, source=data.decode("utf-8", "replace"))


def summarise_path(path: str) -> ModuleSummary | None:
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None
    return _summarise_file(path, mtime)


def sibling_loader(root_dir: str, top_package: str) -> Loader:
    """Load project modules of ``top_package`` from the file system under ``root_dir`` (flake8 mode)."""

    def load(module: str) -> ModuleSummary | None:
        if module.split(".", 1)[0] != top_package:
            return None
        base = os.path.join(root_dir, *module.split("."))
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate):
                return summarise_path(candidate)
        return None

    return load


def project_loader(files_by_module: dict[str, str], roots: dict[str, str]) -> Loader:
    """Load project modules from the CLI's discovered files, else from the file system next to them
    (pre-commit passes only the changed files; their bases live in unchanged ones)."""
    siblings = {top: sibling_loader(root, top) for top, root in roots.items()}

    def load(module: str) -> ModuleSummary | None:
        path = files_by_module.get(module)
        if path:
            return summarise_path(path)
        sibling = siblings.get(module.split(".", 1)[0])
        return sibling(module) if sibling is not None else None

    return load
