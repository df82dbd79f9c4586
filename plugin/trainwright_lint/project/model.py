"""The project model: every class of the project with its full MRO, across files and libraries.

Built once per run from module summaries (``project.summary``). Names resolve the way Python
resolves them (``project.layout`` finds the files; bindings, re-exports, aliases, star imports with
``__all__``, ``try/except ImportError`` candidates and ``TYPE_CHECKING`` imports are followed here),
so that every base of every class is either a project class, a library class we know
(``project.library``), an external class (``torch.nn.Module``) or an unresolved name with a reason.
From those the model computes each class's C3 MRO and its role: a Trainer subclass, a callback, a
mixin combined with a Trainer subclass, or none of these. Nothing is dropped silently: classes that
look like Trainer subclasses or callbacks but could not be resolved are listed with the reason.

The model holds summaries only (plain data); method bodies are read by the analyses, lazily.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from trainwright_lint.project import library
from trainwright_lint.project.layout import ImportRoots, ModuleLocation, dotted_name_of
from trainwright_lint.project.mro import c3_merge
from trainwright_lint.project.summary import (
    ALIAS,
    CLASS,
    IMPORT_FROM,
    IMPORT_MODULE,
    TYPE_CHECKING,
    Binding,
    ClassSummary,
    ModuleSummary,
)

TRAINER = "trainer"
CALLBACK = "callback"
MIXIN = "mixin"

PROJECT_CLASS = "project-class"
LIBRARY_CLASS = "library-class"
EXTERNAL = "external"
MODULE = "module"
UNRESOLVED = "unresolved"

# Top-level packages whose classes are never Trainers or TrainerCallbacks: a base from them is
# resolved (to an ordinary external class), not "unknown".
_KNOWN_EXTERNAL_ROOTS = frozenset(
    {
        "abc", "builtins", "collections", "contextlib", "dataclasses", "enum", "functools", "typing",
        "typing_extensions", "torch", "tensorflow", "keras", "tf_keras", "lightning", "pytorch_lightning",
        "numpy", "pandas", "pydantic", "json", "logging", "threading", "multiprocessing", "argparse",
        "datasets", "accelerate", "peft", "deepspeed", "tokenizers", "huggingface_hub", "safetensors",
        "jax", "flax", "optax", "sklearn", "scipy", "gym", "gymnasium", "ray", "wandb", "mlflow",
    }
)  # fmt: skip
_BUILTINS = frozenset(dir(builtins))
_TARGET_WORDS = ("Trainer", "Callback")
_CYCLE = "a cycle of bases"  # how a class whose bases lead back to it is reported (always listed)


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a dotted name leads to from some module."""

    kind: str
    key: str = ""  # class key (project ``path::qualname`` or library canonical name) or dotted name
    reason: str = ""
    location: ModuleLocation | None = None
    library_class: library.LibraryClass | None = None


@dataclass(frozen=True, slots=True)
class ClassInfo:
    """A resolved class: its MRO across project and library classes and the role it plays, computed
    once per run and shared by every rule."""

    key: str
    path: str | None  # project classes only
    qualname: str | None
    mro_keys: tuple[str, ...]
    role: str | None  # TRAINER / CALLBACK / None (mixins: see ProjectModel.mixin_users)
    catalog_cls: str | None  # "Trainer"/"Seq2SeqTrainer" when transformers' Trainer is in the MRO
    library: str | None  # "trl" when a catalogued TRL trainer is in the MRO
    library_cls: str | None  # the first such TRL class ("GRPOTrainer")
    third_party: bool  # a library trainer other than transformers' own sits in the MRO
    unresolved: tuple[tuple[str, str], ...]  # (base as written, why it is not known)
    handler: bool  # transformers' CallbackHandler or a dispatcher like it: not a callback
    library_mro: tuple[str, ...] = ()  # the MRO less its project classes: what the role is read from


def project_key(path: str, qualname: str) -> str:
    return f"{path}::{qualname}"


def split_key(key: str) -> tuple[str, str] | None:
    """(path, qualname) of a project class key, else None."""
    path, sep, qualname = key.rpartition("::")
    return (path, qualname) if sep else None


def short_name(key: str) -> str:
    """``MyTrainer`` / ``transformers.Trainer``: the readable form of any class key."""
    split = split_key(key)
    if split is not None:
        return split[1]
    return key.removeprefix("ext:").removeprefix("?:")


class ProjectModel:
    """Summaries by file path plus the resolution and class-graph queries the rules need."""

    def __init__(
        self,
        root: str,
        *,
        loader: Callable[[str], ModuleSummary | None] | None = None,
        extra_bases: tuple[str, ...] = (),
        trl_release: str | None = None,
    ) -> None:
        self.roots = ImportRoots(root)
        self.root = self.roots.root
        self.summaries: dict[str, ModuleSummary] = {}
        self.loader = loader
        self.extra_bases = tuple(extra_bases)
        self.trl_release = trl_release  # TRL classes the target lacks are not trainers
        self._failed: set[str] = set()
        self._infos: dict[str, ClassInfo] = {}
        self._resolving: set[tuple[str, str]] = set()
        self._mixins: dict[str, tuple[str, ...]] | None = None
        self._subclasses: dict[str, tuple[str, ...]] | None = None
        # ``trainer.tokenizer = tok`` found in files that define no class (factories, scripts):
        # path -> (attribute, receiver, class it was built from or "").
        self.loose_instance_stores: dict[str, tuple[tuple[str, str, str], ...]] = {}

    # -- modules -----------------------------------------------------------------------------------

    def add(self, summary: ModuleSummary) -> None:
        self.add_all([summary])

    def add_all(self, summaries: Iterable[ModuleSummary], keep_existing: bool = False) -> None:
        """Add (or replace) summaries. A replaced module (a fixed file re-linted) invalidates every
        class fact; a new one only the project-wide ones (mixins, subclasses). A class's MRO cannot
        change when a module is added: each module it needed was loaded when it was resolved. (flake8
        adds one module per file: recomputing every MRO each time made the plugin quadratic.)"""
        replaced = False
        for summary in summaries:
            old = self.summaries.get(summary.path)
            if old is not None and (keep_existing or old is summary):
                continue
            replaced = replaced or old is not None
            self.summaries[summary.path] = summary
        if replaced:
            self._infos.clear()
        self._mixins = self._subclasses = None

    def summary(self, path: str) -> ModuleSummary | None:
        found = self.summaries.get(path)
        if found is None and self.loader is not None and path not in self._failed:
            found = self.loader(path)
            if found is None:
                self._failed.add(path)
            else:
                self.summaries[path] = found
                self._mixins = self._subclasses = None  # a new module: see add_all
        return found

    def display_module(self, path: str) -> str:
        return dotted_name_of(path, self.root)

    # -- names -------------------------------------------------------------------------------------

    def resolve(
        self, path: str, dotted: str, scope: dict[str, tuple[Binding, ...]] | None = None
    ) -> Resolved:
        """What ``dotted`` (``Trainer``, ``tf.Trainer``, ``base.MyBase``) means in module ``path``
        (``scope``: the imports of the function a local class is defined in, looked up first)."""
        guard = (path, dotted)
        if guard in self._resolving or len(self._resolving) > 64:
            return Resolved(UNRESOLVED, reason=f"`{dotted}` is defined in terms of itself (import cycle)")
        self._resolving.add(guard)
        try:
            return self._resolve(path, dotted, scope or {})
        finally:
            self._resolving.discard(guard)

    def _resolve(self, path: str, dotted: str, scope: dict[str, tuple[Binding, ...]]) -> Resolved:
        summary = self.summary(path)
        head, _, rest = dotted.partition(".")
        if summary is None:
            return Resolved(UNRESOLVED, reason=f"cannot read {path}")
        candidates = scope.get(head) or summary.bindings.get(head)
        if candidates:
            ordered = [b for b in candidates if b.context != TYPE_CHECKING] + [
                b for b in candidates if b.context == TYPE_CHECKING
            ]
            first: Resolved | None = None
            for binding in ordered:
                found = self._binding(path, binding, rest)
                if found.kind in (PROJECT_CLASS, LIBRARY_CLASS):
                    return found
                first = first or found
            assert first is not None
            return first
        for module, level, _line in reversed(summary.stars):
            starred = self._through_star(path, module, level, head, rest)
            if starred is not None:
                return starred
        if head in _BUILTINS:
            return Resolved(EXTERNAL, key=f"builtins.{dotted}")
        where = self.display_module(path)
        if summary.stars:
            return Resolved(
                UNRESOLVED,
                reason=f"`{head}` is not defined in {where}; it may come from a star import trainwright cannot read",
            )
        return Resolved(UNRESOLVED, reason=f"`{head}` is neither defined nor imported in {where}")

    def _binding(self, path: str, binding: Binding, rest: str) -> Resolved:
        if binding.kind == CLASS:
            return self._project_class(path, binding.name, rest)
        if binding.kind == ALIAS:
            target = f"{binding.module}.{rest}" if rest else binding.module
            return self.resolve(path, target)
        if binding.kind == IMPORT_MODULE:
            location = self.roots.find_absolute(path, binding.module)
            if location is None:
                return self._outside(f"{binding.module}.{rest}" if rest else binding.module)
            return self._in_module(location, rest, binding.module)
        assert binding.kind == IMPORT_FROM
        if binding.level:
            location = self.roots.find_relative(path, binding.level, binding.module or None)
            if location is None:
                dots = "." * binding.level
                return Resolved(
                    UNRESOLVED,
                    reason=f"relative import `from {dots}{binding.module} import {binding.name}` leads outside the project",
                )
        else:
            location = self.roots.find_absolute(path, binding.module) if binding.module else None
            if location is None:
                parts = [p for p in (binding.module, binding.name, rest) if p]
                return self._outside(".".join(parts))
        name_path = f"{binding.name}.{rest}" if rest else binding.name
        return self._in_module(location, name_path, binding.module or binding.name)

    def _in_module(self, location: ModuleLocation, dotted: str, shown: str) -> Resolved:
        """``dotted`` looked up inside a project module (its names first, then its submodules)."""
        if not dotted:
            return Resolved(MODULE, key=location.path or location.directory or "", location=location)
        head, _, rest = dotted.partition(".")
        if location.path is not None:
            summary = self.summary(location.path)
            if summary is not None and (head in summary.bindings or summary.stars):
                found = self.resolve(location.path, dotted)
                if found.kind != UNRESOLVED or head in summary.bindings:
                    return found
        sub = self.roots.submodule(location, head)
        if sub is not None:
            return self._in_module(sub, rest, f"{shown}.{head}")
        return Resolved(UNRESOLVED, reason=f"module `{shown}` has no name `{head}`")

    def _project_class(self, path: str, qualname: str, rest: str) -> Resolved:
        summary = self.summary(path)
        full = f"{qualname}.{rest}" if rest else qualname
        if summary is not None and full in summary.classes:
            return Resolved(PROJECT_CLASS, key=project_key(path, full))
        return Resolved(UNRESOLVED, reason=f"`{full}` is not a class of {self.display_module(path)}")

    def _outside(self, dotted: str) -> Resolved:
        found = library.identify(dotted, self.extra_bases, self.trl_release)
        if isinstance(found, library.LibraryClass):
            return Resolved(LIBRARY_CLASS, key=found.key, library_class=found)
        if isinstance(found, library.Absent):
            return Resolved(UNRESOLVED, key=found.dotted, reason=found.reason)
        return Resolved(EXTERNAL, key=dotted)

    def _through_star(self, path: str, module: str, level: int, head: str, rest: str) -> Resolved | None:
        dotted = f"{head}.{rest}" if rest else head
        if level:
            location = self.roots.find_relative(path, level, module or None)
        else:
            location = self.roots.find_absolute(path, module)
        if location is not None:
            if location.path is None:
                return None
            summary = self.summary(location.path)
            if summary is None or not _exports(summary, head):
                return None
            return self.resolve(location.path, dotted)
        exported = library.library_exports(module)
        if exported is not None and head not in exported:
            return None
        found = library.identify(f"{module}.{dotted}", self.extra_bases, self.trl_release)
        if not isinstance(found, library.LibraryClass):
            return None
        return Resolved(LIBRARY_CLASS, key=found.key, library_class=found)

    # -- classes -----------------------------------------------------------------------------------

    def class_summary(self, key: str) -> tuple[ModuleSummary, ClassSummary] | None:
        split = split_key(key)
        if split is None:
            return None
        summary = self.summary(split[0])
        if summary is None:
            return None
        cls = summary.classes.get(split[1])
        return (summary, cls) if cls is not None else None

    def info(self, key: str) -> ClassInfo:
        """Everything about the class ``key`` (project or library), cached."""
        cached = self._infos.get(key)
        if cached is not None:
            return cached
        if split_key(key) is not None:
            self._project_infos(key)
            return self._infos[key]
        found = (
            library.identify(key, self.extra_bases, self.trl_release)
            if not key.startswith(("ext:", "?:"))
            else None
        )
        info = _library_info(key, found.mro_keys if isinstance(found, library.LibraryClass) else (key,))
        self._infos[key] = info
        return info

    def _project_infos(self, start: str) -> None:
        """The infos of ``start`` and of every project class it needs, bases first.

        Iterative (a depth-first walk on an explicit stack) so that a chain of thousands of classes
        needs no recursion, and each class is resolved once: its MRO is built from its bases' cached
        MROs, linear in the MRO's length. A base that is still on the walk's path closes a cycle
        (``class A(B)`` / ``class B(A)``, which Python cannot define): every class of the cycle is
        reported as unresolved with the cycle spelt out, and the closing base is left out of its MRO.
        """
        path: list[str] = []  # the classes being resolved, each a base of the one before it
        on_path: dict[str, int] = {}
        bases: dict[str, list[tuple[str, Resolved]]] = {}
        cycles: dict[str, tuple[str, frozenset[str]]] = {}  # class -> its cycle in words, and its members
        stack = [start]
        while stack:
            key = stack[-1]
            if key in self._infos:
                stack.pop()
                continue
            if key not in bases:
                bases[key] = self._resolved_bases(key)
                on_path[key] = len(path)
                path.append(key)
            waiting = None
            for _, r in bases[key]:
                if r.kind != PROJECT_CLASS or r.key in self._infos:
                    continue
                if r.key in on_path:
                    members = path[on_path[r.key] :]
                    cycle = (_cycle_text(members), frozenset(members))
                    for member in members:
                        cycles.setdefault(member, cycle)
                elif waiting is None:
                    waiting = r.key
            if waiting is not None:
                stack.append(waiting)
                continue
            self._infos[key] = self._project_info(key, bases.pop(key), cycles.get(key))
            path.pop()
            del on_path[key]
            stack.pop()

    def _resolved_bases(self, key: str) -> list[tuple[str, Resolved]]:
        """``(base as written, what it resolves to)`` for each base of the project class ``key``."""
        found = self.class_summary(key)
        if found is None:
            return []
        split = split_key(key)
        assert split is not None
        cls = found[1]
        return [
            (text, self.resolve(split[0], text, cls.scope_bindings) if text else Resolved(UNRESOLVED))
            for text in cls.bases
        ]

    def _project_info(
        self, key: str, bases: list[tuple[str, Resolved]], cycle: tuple[str, frozenset[str]] | None
    ) -> ClassInfo:
        """The info of a project class whose project bases all have theirs (except one closing a cycle);
        ``cycle``: the cycle of bases it is part of (in words, and its members)."""
        found = self.class_summary(key)
        split = split_key(key)
        if found is None or split is None:
            return _library_info(key, (key,))
        path, qualname = split
        _, cls = found
        base_keys: list[str] = []
        base_mros: list[tuple[str, ...]] = []
        unresolved: list[tuple[str, str]] = []
        why_cycle = f"{_CYCLE} ({cycle[0]}): Python cannot define these classes" if cycle else ""
        for text, r in bases:
            if cycle is not None and r.kind == PROJECT_CLASS and r.key in cycle[1]:
                unresolved.append((text, why_cycle))
            if not text:
                unresolved.append(("<expression>", "a base that is not a plain name cannot be followed"))
                continue
            if r.kind == PROJECT_CLASS and r.key in self._infos:
                base_keys.append(r.key)
                base_mros.append(self._infos[r.key].mro_keys)
            elif r.kind == PROJECT_CLASS:  # still being resolved: it closes the cycle, left out of the MRO
                pass
            elif r.kind == LIBRARY_CLASS and r.library_class is not None:
                base_keys.append(r.key)
                base_mros.append(r.library_class.mro_keys)
            elif r.kind == EXTERNAL:
                ext = "ext:" + r.key
                base_keys.append(ext)
                base_mros.append((ext,))
                root = r.key.split(".", 1)[0]
                if root not in _KNOWN_EXTERNAL_ROOTS:
                    unresolved.append(
                        (text, f"`{r.key}` is neither in the project nor a library trainwright knows")
                    )
            else:
                reason = r.reason or f"`{text}` is not a class"
                base_keys.append("?:" + text)
                base_mros.append(("?:" + text,))
                unresolved.append((text, reason))
        mro = c3_merge(key, base_mros, base_keys)
        # The role is read from the library part of the MRO only; under single inheritance from a
        # project class it is the base's, so a chain of classes does not scan each MRO again.
        single = len(base_keys) == 1 and split_key(base_keys[0]) is not None and base_keys[0] in self._infos
        library_mro = self._infos[base_keys[0]].library_mro if single else None
        info = _classify(key, mro, path, qualname, tuple(unresolved), self.extra_bases, library_mro)
        if info.role == CALLBACK and "call_event" in cls.methods:
            info = _with_handler(info)
        return info

    def classes(self) -> Iterator[str]:
        """Keys of every class of every summarised module."""
        for path, summary in list(self.summaries.items()):
            for qualname in summary.classes:
                yield project_key(path, qualname)

    def role(self, key: str) -> str | None:
        """TRAINER, CALLBACK (a ``CallbackHandler`` too: see ``ClassInfo.handler``), MIXIN or None."""
        info = self.info(key)
        if info.role is not None:
            return info.role
        return MIXIN if key in self.mixin_users() else None

    def mixin_users(self) -> dict[str, tuple[str, ...]]:
        """Project classes that are not Trainer subclasses themselves but sit in the MRO of one
        before the library part (mixins), mapped to the Trainer subclasses that use them."""
        if self._mixins is None:
            users: dict[str, list[str]] = {}
            for key in list(self.classes()):
                info = self.info(key)
                if info.role != TRAINER:
                    continue
                for base in info.mro_keys[1:]:
                    if split_key(base) is None:
                        break
                    if self.info(base).role is None:
                        users.setdefault(base, []).append(key)
            self._mixins = {k: tuple(v) for k, v in users.items()}
        return self._mixins

    def subclasses(self, key: str) -> tuple[str, ...]:
        """Project classes with ``key`` in their MRO (itself excluded)."""
        if self._subclasses is None:
            subs: dict[str, list[str]] = {}
            for k in list(self.classes()):
                for base in self.info(k).mro_keys[1:]:
                    subs.setdefault(base, []).append(k)
            self._subclasses = {k: tuple(v) for k, v in subs.items()}
        return self._subclasses.get(key, ())

    def target_classes(self, path: str) -> list[str]:
        """Keys of the classes in ``path`` that the rules look at (trainer, mixin, callback)."""
        summary = self.summary(path)
        if summary is None:
            return []
        return [k for k in (project_key(path, q) for q in summary.classes) if self.role(k) is not None]

    def unresolved_lookalikes(self, path: str) -> list[tuple[ClassSummary, str]]:
        """Classes of ``path`` that look like Trainer subclasses or callbacks (by name or base) but
        whose role could not be decided, with the reason; and every class of a cycle of bases."""
        summary = self.summary(path)
        out: list[tuple[ClassSummary, str]] = []
        if summary is None:
            return out
        words = _TARGET_WORDS + tuple(b.rsplit(".", 1)[-1] for b in self.extra_bases)
        for qualname, cls in summary.classes.items():
            key = project_key(path, qualname)
            if self.role(key) is not None:
                continue
            looks = any(w in cls.name for w in words) or any(w in b for b in cls.bases for w in words)
            looks = looks or any(why.startswith(_CYCLE) for _, why in self.info(key).unresolved)
            if not looks:
                continue
            reasons = self._unresolved_chain(key)
            if reasons:
                out.append((cls, "; ".join(f"base `{b}`: {r}" for b, r in reasons[:3])))
        return out

    def _unresolved_chain(self, key: str) -> list[tuple[str, str]]:
        """The unresolved bases of ``key`` and of the project classes in its MRO, nearest first. The
        MRO already lists every ancestor, so one pass over it is the whole chain (no recursion)."""
        reasons = list(self.info(key).unresolved)
        for base in self.info(key).mro_keys[1:]:
            if split_key(base) is not None:
                reasons += self.info(base).unresolved
        first: dict[str, tuple[str, str]] = {}  # one entry per reason: a cycle is one reason, not 500
        for base, why in reasons:
            first.setdefault(why, (base, why))
        return list(first.values())

    # -- methods -------------------------------------------------------------------------------------

    def defines(self, key: str, method: str) -> bool | None:
        """Whether class ``key`` itself defines ``method``: True/False, None when unknown (external)."""
        found = self.class_summary(key)
        if found is not None:
            return method in found[1].methods or method in found[1].class_attributes
        return None

    def instance_stores(self) -> Iterator[tuple[str, str, str, str]]:
        """(path, attribute, receiver, built-from class) of every ``x.<attr> = ...`` outside a class
        that the project's files show, summarised or not."""
        for path, summary in list(self.summaries.items()):
            for attr, receiver, built in summary.instance_stores:
                yield path, attr, receiver, built
        for path, stores in self.loose_instance_stores.items():
            if path not in self.summaries:
                for attr, receiver, built in stores:
                    yield path, attr, receiver, built

    def relpath(self, path: str) -> str:
        try:
            rel = os.path.relpath(path, self.root)
        except ValueError:
            return path
        return path if rel.startswith("..") else rel


def _cycle_text(members: list[str]) -> str:
    """``A → B → C → A``; a long cycle keeps its first three classes and its last one."""
    names = [short_name(k) for k in members]
    if len(names) > 6:
        names = [*names[:3], "…", names[-1]]
    return " → ".join([*names, names[0]]) + (f" ({len(members)} classes)" if len(members) > 6 else "")


def _exports(summary: ModuleSummary, name: str) -> bool:
    if summary.all_names is not None:
        return name in summary.all_names
    return not name.startswith("_") and (name in summary.bindings or name in summary.classes)


def _library_info(key: str, mro: tuple[str, ...]) -> ClassInfo:
    return _classify(key, mro, None, None, (), ())


def _classify(
    key: str,
    mro: tuple[str, ...],
    path: str | None,
    qualname: str | None,
    unresolved: tuple[tuple[str, str], ...],
    extra_bases: tuple[str, ...],
    library_mro: tuple[str, ...] | None = None,
) -> ClassInfo:
    """The role and library facts of a class with MRO ``mro``, read from its non-project entries
    (``library_mro``, computed from ``mro`` when not given)."""
    if library_mro is None:
        library_mro = tuple(m for m in mro if split_key(m) is None)
    members = set(library_mro)
    is_trainer = library.TRAINER in members or library.SETFIT in members
    role = TRAINER if is_trainer else CALLBACK if library.CALLBACK in members else None
    catalog_cls = None
    if library.TRAINER in members:
        catalog_cls = "Seq2SeqTrainer" if library.SEQ2SEQ in members else "Trainer"
    trl_cls = next(
        (
            m.split(".", 1)[1]
            for m in library_mro
            if m.startswith("trl.") and m.split(".", 1)[1] in library.trl_classes()
        ),
        None,
    )
    third_party = any(
        not m.startswith(("transformers.", "ext:", "?:")) and (m.endswith("Trainer") or m in extra_bases)
        for m in library_mro
    )
    return ClassInfo(
        key=key,
        path=path,
        qualname=qualname,
        mro_keys=mro,
        role=role,
        catalog_cls=catalog_cls,
        library="trl" if trl_cls else None,
        library_cls=trl_cls,
        third_party=third_party,
        unresolved=unresolved,
        handler=library.HANDLER in members,
        library_mro=library_mro,
    )


def _with_handler(info: ClassInfo) -> ClassInfo:
    return replace(info, handler=True)
