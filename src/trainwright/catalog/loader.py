"""Load the generated catalogue (``data/<library>.json``) and answer version-aware queries.

Why lazy: ``load_catalog()`` runs in every pre-commit hook, so it only parses the compact JSON; the
typed records (:mod:`trainwright.catalog.model`) are built on first use per (version, class) and cached.
The data file stores, per method, ``[first, last, ...]`` release ranges, so a query for one release is a
range lookup over a few entries.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any

from trainwright.catalog import usercache
from trainwright.catalog.additions import APPENDERS, append_release
from trainwright.catalog.distributions import metadata_folders
from trainwright.catalog.guidance import GuidanceBook, load_guidance_book
from trainwright.catalog.legacy import LegacyMethod, LegacyNames, load_legacy
from trainwright.catalog.model import (
    PARAM_KINDS,
    ArgumentField,
    CallSite,
    ClassInfo,
    EventInfo,
    Guidance,
    MethodHistory,
    MethodInfo,
    Param,
    Rename,
    Signature,
)
from trainwright.catalog.structure import ArgumentFacts, ModuleFacts, load_argument_facts, load_module_facts
from trainwright.catalog.upstream import UpstreamFingerprints, load_upstream
from trainwright.catalog.versions import nearest_at_or_below, version_key

SUPPORTED_FORMAT = 1
DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
DEFAULT_CLASS = "Trainer"
CallHistory = tuple[tuple[str, "str | None", tuple[CallSite, ...]], ...]  # see ``Catalog.call_history``
DEFAULT_ARGUMENTS_CLASS = "TrainingArguments"


def is_private(name: str) -> bool:
    """``_``-prefixed and not a dunder: the transformers convention for internal machinery."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _signature(params: list[list[Any]], kind: str) -> Signature:
    return Signature(
        params=tuple(Param(name, PARAM_KINDS[code], default) for name, code, default in params),
        bound=kind != "staticmethod",
    )


class VersionView:
    """The catalogue at one covered release (obtain it with :meth:`Catalog.at`)."""

    def __init__(self, catalog: Catalog, version: str) -> None:
        self._catalog = catalog
        self.version = version
        self._index = catalog._index[version]
        self._methods: dict[str, Mapping[str, MethodInfo]] = {}
        self._mro_cache: dict[str, tuple[str, ...]] = {}
        self._fields_cache: dict[tuple[str, str | None], Mapping[str, ArgumentField]] = {}

    def __repr__(self) -> str:
        return f"VersionView({self._catalog.library} {self.version})"

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(
            cls
            for cls, methods in self._catalog._raw["classes"].items()
            if any(self._catalog._find(entry["defs"], self._index) for entry in methods.values())
        )

    def methods(self, cls: str = DEFAULT_CLASS) -> Mapping[str, MethodInfo]:
        """Every method ``cls`` has at this release, inherited ones included, sorted by name."""
        cached = self._methods.get(cls)
        if cached is None:
            raw = self._catalog._class(cls)
            out: dict[str, MethodInfo] = {}
            for name in sorted(raw):
                info = self._build(cls, name, raw[name])
                if info is not None:
                    out[name] = info
            cached = self._methods[cls] = MappingProxyType(out)
        return cached

    def method(self, name: str, cls: str = DEFAULT_CLASS) -> MethodInfo | None:
        return self.methods(cls).get(name)

    def _build(self, cls: str, name: str, entry: dict[str, Any]) -> MethodInfo | None:
        """The method at this release; built once per distinct (definition, call sites, called) span
        triple and shared by the releases those spans cover: a 64-release range builds each once."""
        find = self._catalog._find
        definition = find(entry["defs"], self._index)
        if definition is None:
            return None
        calls = find(entry["calls"], self._index)
        called = find(entry["called"], self._index) is not None
        key = (cls, name, id(definition), id(calls), called)  # spans live as long as the catalogue
        built = self._catalog._built.get(key)
        if built is None:
            built = self._catalog._built[key] = self._method_info(name, definition, calls, called)
        return built

    def _method_info(
        self, name: str, definition: list[Any], calls: list[Any] | None, called: bool
    ) -> MethodInfo:
        owner, kind, params = definition[2:]
        sites = tuple(
            CallSite(caller, n_pos, tuple(kws), bool(sa), bool(sk))
            for caller, n_pos, kws, sa, sk in (calls[2] if calls else [])
        )
        return MethodInfo(
            name=name,
            owner=owner,
            library=self._catalog.library,
            private=is_private(name),
            signature=_signature(params, kind),
            call_sites=sites,
            called=called,
            kind=kind,
        )

    @cached_property
    def events(self) -> Mapping[str, EventInfo]:
        """``TrainerCallback`` events present at this release, in firing order."""
        out = []
        for name, spans in self._catalog._raw["events"].items():
            span = self._catalog._find(spans, self._index)
            if span is not None:
                out.append(self._catalog._event(name, tuple(span[2])))
        out.sort(key=lambda e: (e.order, e.name))
        return MappingProxyType({e.name: e for e in out})

    @cached_property
    def control_flags(self) -> tuple[str, ...]:
        span = self._catalog._find(self._catalog._raw["control_flags"], self._index)
        return tuple(span[2]) if span else ()

    # ------------------------------------------------------------------ classes, exports and arguments

    def exports(self, module: str) -> Mapping[str, str]:
        """What ``from module import *`` binds at this release: ``name -> canonical class``."""
        return self._catalog._modules.exports(module, self._index)

    def bases(self, cls: str) -> tuple[str, ...]:
        """Direct bases of ``cls`` at this release as canonical dotted names, ``()`` if unknown.

        A base from another library keeps that library's canonical name (TRL's ``BaseTrainer`` ->
        ``transformers.trainer.Trainer``); a base that could not be resolved is its source text.
        """
        canonical = self._catalog.resolve_class(cls, self.version)
        if canonical is None:
            return ()
        return self._catalog._modules.bases(canonical, self._index) or ()

    def class_info(self, cls: str) -> ClassInfo | None:
        """Canonical name, bases and public aliases of ``cls`` (short, dotted or alias) at this release."""
        canonical = self._catalog.resolve_class(cls, self.version)
        if canonical is None:
            return None
        modules = self._catalog._modules
        bases = modules.bases(canonical, self._index)
        if bases is None:
            return None
        return ClassInfo(canonical, bases, modules.aliases(canonical, self._index))

    def mro(self, cls: str) -> tuple[str, ...]:
        """C3 linearisation of ``cls`` over this library's class graph at this release (canonical names).

        Classes outside the graph (another library's, ``object``) end their branch: combine with the other
        catalogue's ``mro`` for the full order. Falls back to depth-first order if C3 fails.
        """
        canonical = self._catalog.resolve_class(cls, self.version) or cls
        cache = self._mro_cache
        if canonical not in cache:
            cache[canonical] = _c3(canonical, lambda c: self._catalog._modules.bases(c, self._index) or ())
        return cache[canonical]

    def argument_fields(
        self, cls: str = DEFAULT_ARGUMENTS_CLASS, *, base_version: str | None = None
    ) -> Mapping[str, ArgumentField]:
        """The dataclass fields of an arguments/config class at this release, in ``__init__`` order.

        Inherited fields are included along this library's MRO (dataclass rules: a redefinition keeps the
        base's position). A TRL config inherits ``TrainingArguments`` from transformers, whose fields are
        only included when ``base_version`` (the transformers release) is given. Empty if unknown.
        """
        catalog = self._catalog
        canonical = catalog.resolve_class(cls, self.version)
        if canonical is None:
            return MappingProxyType({})
        key = (canonical, base_version)
        cached = self._fields_cache.get(key)
        if cached is not None:
            return cached
        out: dict[str, ArgumentField] = {}
        for klass in reversed(self.mro(canonical)):
            own = catalog._arguments.own_fields(klass, self._index)
            if own is None:
                if (
                    base_version is not None
                    and klass.startswith("transformers.")
                    and catalog.library != "transformers"
                ):
                    other = load_catalog("transformers")
                    out.update(other.at(base_version).argument_fields(klass))
                continue
            for name, default, factory, init in own:
                out[name] = ArgumentField(name, default, factory, bool(init), klass)
        cached = self._fields_cache[key] = MappingProxyType(out)
        return cached


class Catalog:
    """Trainer API of one library across its covered releases (see the module docstring)."""

    def __init__(
        self,
        raw: dict[str, Any],
        guidance: GuidanceBook,
        added: tuple[usercache.AddedRelease, ...] = (),
        problems: tuple[str, ...] = (),
    ) -> None:
        if raw.get("format") != SUPPORTED_FORMAT:
            raise ValueError(
                f"catalogue data format {raw.get('format')!r} is not supported (expected {SUPPORTED_FORMAT}); "
                "regenerate it with scripts/build_catalog.py"
            )
        #: The newest release of the shipped data; ``added`` are the releases after it (see usercache).
        self.shipped_newest: str = raw["versions"][-1]
        self.added = added
        #: Why a newer installed release could not be covered (shown as warnings by the linter).
        self.problems = problems
        for release in added:
            append_release(raw, release.version, release.record["release"])
        self._raw = raw
        self._book = guidance
        self.library: str = raw["library"]
        self.versions: tuple[str, ...] = tuple(raw["versions"])
        self._index = {v: i for i, v in enumerate(self.versions)}
        self._views: dict[str, VersionView] = {}
        self._upstream: UpstreamFingerprints | None = None
        self._module_facts: ModuleFacts | None = None
        self._argument_facts: ArgumentFacts | None = None
        self._legacy: LegacyNames | None = None
        self._names_cache: dict[tuple[str, int], frozenset[str] | None] = {}
        self._runs_cache: dict[tuple[str, str, str, tuple[str, ...]], tuple[Any, ...]] = {}
        self._built: dict[tuple[Any, ...], MethodInfo] = {}  # VersionView._build's, across releases
        # Per (name, class): the rules ask for the same histories again for every class and release run
        # (613 calls, 144 distinct on TRL's source; 10 ms).
        self._histories: dict[tuple[str, str], MethodHistory | None] = {}
        self._call_histories: dict[tuple[str, str], CallHistory] = {}

    def __repr__(self) -> str:
        return f"Catalog({self.library}, {self.versions[0]}..{self.newest}, {len(self.versions)} releases)"

    @property
    def newest(self) -> str:
        return self.versions[-1]

    def provenance(self, releases: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """Where the facts of each added release among ``releases`` (default all) came from:
        ``("5.25.0 from the installed source",)``; empty when every one is shipped."""
        wanted = None if releases is None else set(releases)
        return tuple(a.provenance for a in self.added if wanted is None or a.version in wanted)

    def _extend_fact(self, fact: str, doc: dict[str, Any]) -> dict[str, Any]:
        """A shipped fact document with the added releases appended (their records carry each fact)."""
        for release in self.added:
            APPENDERS[fact](doc, release.version, release.record["facts"][fact])
        return doc

    @property
    def oldest(self) -> str:
        return self.versions[0]

    # ------------------------------------------------------------------------------------------ versions

    def resolve_version(self, version: str | None = None) -> str:
        """``None`` -> newest; a covered release -> itself; otherwise the nearest covered release <= it."""
        if version is None:
            return self.newest
        if version in self._index:
            return version
        return nearest_at_or_below(version, self.versions)

    def at(self, version: str | None = None) -> VersionView:
        resolved = self.resolve_version(version)
        view = self._views.get(resolved)
        if view is None:
            view = self._views[resolved] = VersionView(self, resolved)
        return view

    # ----------------------------------------------------------------------------------------- histories

    def class_names(self) -> tuple[str, ...]:
        """Every catalogued class (a :class:`VersionView` lists those present at its release)."""
        return tuple(self._raw["classes"])

    def method_names(self, cls: str = DEFAULT_CLASS) -> tuple[str, ...]:
        """Every method name ``cls`` had in any covered release."""
        return tuple(sorted(self._class(cls)))

    def ever_defined(self, name: str, cls: str = DEFAULT_CLASS) -> bool:
        return name in self._class(cls)

    def method_history(self, name: str, cls: str = DEFAULT_CLASS) -> MethodHistory | None:
        key = (name, cls)
        if key not in self._histories:
            self._histories[key] = self._method_history(name, cls)
        return self._histories[key]

    def _method_history(self, name: str, cls: str) -> MethodHistory | None:
        entry = self._class(cls).get(name)
        if entry is None:
            return None
        defined = self._indices(entry["defs"])
        called = self._indices(entry["called"])
        signatures: list[tuple[int, int, Signature]] = []
        for first, last, _owner, kind, params in entry["defs"]:
            sig = _signature(params, kind)
            a, b = self._index[first], self._index[last]
            if signatures and signatures[-1][2] == sig and signatures[-1][1] + 1 == a:
                signatures[-1] = (signatures[-1][0], b, sig)
            else:
                signatures.append((a, b, sig))
        last_index = max(defined)
        return MethodHistory(
            name=name,
            owner=entry["defs"][-1][2],
            private=is_private(name),
            first=self.versions[min(defined)],
            last=None if last_index == len(self.versions) - 1 else self.versions[last_index],
            signatures=tuple((self.versions[a], self._open_end(b), sig) for a, b, sig in signatures),
            never_called=tuple(
                (self.versions[a], self._open_end(b)) for a, b in _runs(sorted(defined - called))
            ),
        )

    def legacy_method(self, name: str, cls: str = DEFAULT_CLASS) -> LegacyMethod | None:
        """``cls.name`` when only releases older than the catalogue defined it (``init_git_repo``):
        read from ``data/<library>-legacy.json`` on the first call."""
        if self._legacy is None:
            self._legacy = load_legacy(DATA_DIR, self.library)
        return self._legacy.method(name, cls)

    def called_versions(self, name: str, cls: str = DEFAULT_CLASS) -> tuple[str, ...]:
        """The covered releases in which the library itself calls (or passes on) ``name``."""
        entry = self._class(cls).get(name)
        if entry is None:
            return ()
        return tuple(self.versions[i] for i in sorted(self._indices(entry["called"])))

    def call_history(self, name: str, cls: str = DEFAULT_CLASS) -> CallHistory:
        """How the library calls ``name`` over releases: ``((first, last|None, call_sites), ...)``.

        Only ranges with at least one call site are listed (a method passed around by reference is
        "called" without a visible call site).
        """
        key = (name, cls)
        if key not in self._call_histories:
            self._call_histories[key] = self._call_history(name, cls)
        return self._call_histories[key]

    def _call_history(self, name: str, cls: str) -> CallHistory:
        entry = self._class(cls).get(name)
        if entry is None:
            return ()
        return tuple(
            (
                first,
                self._open_end(self._index[last]),
                tuple(CallSite(c, n, tuple(k), bool(sa), bool(sk)) for c, n, k, sa, sk in sites),
            )
            for first, last, sites in entry["calls"]
        )

    def event_names(self) -> tuple[str, ...]:
        return tuple(
            e.name
            for e in sorted((self.event_history(n) for n in self._raw["events"]), key=_event_key)
            if e is not None  # the key asserts it of every event, before the first is named
        )

    def event_history(self, name: str) -> EventInfo | None:
        """The event over all covered releases; ``kwargs`` are those of the newest release that has it."""
        spans = self._raw["events"].get(name)
        if not spans:
            return None
        return self._event(name, tuple(spans[-1][2]))

    # ---------------------------------------------------------------------------- releases as data

    def method_runs(self, name: str, cls: str, releases: tuple[str, ...]) -> tuple[int, ...]:
        """For each of ``releases`` (covered, ascending), the id of its *run*: the maximal stretch of
        consecutive covered releases over which everything recorded about ``cls.name`` (definition,
        call sites, whether the library calls it) stays the same.

        Why: a question about one method (its signature binds a call, it is defined, it is called)
        has the same answer at every release of a run, so a caller evaluates it once per run and reads
        the answer as a set of releases. Runs never bridge a release missing from ``releases``, so
        "before it was added" and "after it was removed" stay apart. Cached per arguments.
        """
        key = ("method", cls, name, releases)
        cached = self._runs_cache.get(key)
        if cached is None:
            entry = self._raw["classes"].get(cls, {}).get(name)
            spans = (entry["defs"], entry["calls"], entry["called"]) if entry is not None else ()
            cached = self._runs_cache[key] = self._run_ids(releases, spans)
        return cached

    def caller_closure(self, name: str, cls: str = DEFAULT_CLASS) -> tuple[str, ...]:
        """Every method of ``cls`` that calls ``name`` in some covered release, directly or through
        such callers, sorted: the methods whose facts decide whether a call of ``name`` still runs."""
        key = ("closure", cls, name, ())
        cached = self._runs_cache.get(key)
        if cached is None:
            seen: set[str] = set()
            todo = [name]
            while todo:
                for _first, _last, sites in self.call_history(todo.pop(), cls):
                    for site in sites:
                        if "." not in site.caller and site.caller not in seen:
                            seen.add(site.caller)
                            todo.append(site.caller)
            cached = self._runs_cache[key] = tuple(sorted(seen))
        return cached

    def class_runs(self, cls: str, releases: tuple[str, ...]) -> tuple[int, ...]:
        """Like :meth:`method_runs` for whether ``cls`` is present at all (some method is defined)."""
        key = ("class", cls, "", releases)
        cached = self._runs_cache.get(key)
        if cached is None:
            methods = self._raw["classes"].get(cls, {})
            present = [any(self._find(e["defs"], self._index[v]) for e in methods.values()) for v in releases]
            cached = self._runs_cache[key] = _ids_of(releases, self._index, present)
        return cached

    def event_runs(self, releases: tuple[str, ...]) -> tuple[int, ...]:
        """Like :meth:`method_runs` for the callback events and control flags as a whole."""
        key = ("events", "", "", releases)
        cached = self._runs_cache.get(key)
        if cached is None:
            spans = (*self._raw["events"].values(), self._raw["control_flags"])
            cached = self._runs_cache[key] = self._run_ids(releases, spans)
        return cached

    def _run_ids(self, releases: tuple[str, ...], spans: tuple[list[list[Any]], ...]) -> tuple[int, ...]:
        states = []
        for version in releases:
            index = self._index[version]
            states.append(tuple(id(self._find(s, index)) for s in spans))
        return _ids_of(releases, self._index, states)

    # -------------------------------------------------------- facts for the linter (lazily loaded data)

    def upstream_fingerprints(self) -> UpstreamFingerprints:
        """Statement fingerprints of every catalogued method in every covered release.

        Read from ``data/<library>-fingerprints.json`` on the first call (then cached). Compare with
        :func:`trainwright.catalog.fingerprint.statement_fingerprints` of a user's override.
        """
        if self._upstream is None:
            self._upstream = load_upstream(self, DATA_DIR, self._extend_fact)
        return self._upstream

    @property
    def _modules(self) -> ModuleFacts:
        if self._module_facts is None:
            self._module_facts = load_module_facts(self, DATA_DIR, self._extend_fact)
        return self._module_facts

    @property
    def _arguments(self) -> ArgumentFacts:
        if self._argument_facts is None:
            self._argument_facts = load_argument_facts(self, DATA_DIR, self._extend_fact)
        return self._argument_facts

    def export_modules(self) -> tuple[str, ...]:
        """The modules whose star-import exports are recorded (``transformers``, ``trl.trainer``, ...)."""
        return self._modules.export_modules()

    def exports(self, module: str, version: str | None = None) -> Mapping[str, str]:
        """``from module import *`` at ``version`` (default newest): ``name -> canonical dotted class``.

        Only names bound to classes ending in ``Trainer``, ``Callback``, ``Arguments``, ``Config``,
        ``Control``, ``State`` or ``CallbackHandler`` are listed (``__all__`` when the module defines it,
        the lazy ``_import_structure`` of a package ``__init__``, else its public names). Empty for a
        module that is not recorded (see :meth:`export_modules`) or not in that release.
        """
        return self._modules.exports(module, self._index[self.resolve_version(version)])

    def canonical(self, dotted: str, version: str | None = None) -> str | None:
        """The canonical dotted name of a class given any public alias of it, or ``None``.

        ``transformers.Trainer`` and ``transformers.trainer.Trainer`` -> ``transformers.trainer.Trainer``.
        Without ``version``, an alias means what the newest release that has it says. Only names of
        this catalogue's library are known (ask the TRL catalogue for ``trl.*``).
        """
        index = None if version is None else self._index[self.resolve_version(version)]
        return self._modules.canonical(dotted, index)

    def aliases(self, canonical: str, version: str | None = None) -> tuple[str, ...]:
        """The public dotted names (``module.name`` of a recorded export) of a canonical class."""
        index = None if version is None else self._index[self.resolve_version(version)]
        return self._modules.aliases(canonical, index)

    def resolve_class(self, cls: str, version: str | None = None) -> str | None:
        """Canonical dotted name for a short name (``"GRPOTrainer"``), an alias or a canonical name."""
        resolved = self.resolve_version(version)
        index = self._index[resolved]
        if "." in cls:
            return self._modules.canonical(cls, index) or self._modules.canonical(cls, None)
        return self._modules.resolve_short(cls, index)

    def trainer_callback_classes(self, version: str | None = None) -> frozenset[str]:
        """Classes that subclass ``transformers.TrainerCallback`` (itself included): canonical names and
        public aliases. ``version=None``: any covered release."""
        index = None if version is None else self._index[self.resolve_version(version)]
        return self._modules.callback_classes(index, trainer=True)

    def non_trainer_callback_classes(self, version: str | None = None) -> frozenset[str]:
        """Classes named ``*Callback`` that are *not* ``TrainerCallback``s (transformers' Keras callbacks
        ``KerasMetricCallback`` and ``PushToHubCallback``): canonical names and public aliases."""
        index = None if version is None else self._index[self.resolve_version(version)]
        return self._modules.callback_classes(index, trainer=False)

    def _argument_names_at(self, cls: str, index: int) -> frozenset[str] | None:
        """Field names (arguments/config class) or ``__init__`` parameter names (trainer) at a release."""
        key = (cls, index)
        if key not in self._names_cache:
            self._names_cache[key] = self._argument_names_uncached(cls, index)
        return self._names_cache[key]

    def _argument_names_uncached(self, cls: str, index: int) -> frozenset[str] | None:
        version = self.versions[index]
        canonical = self.resolve_class(cls, version)
        if canonical is not None and any(self._arguments.has(k) for k in self.at(version).mro(canonical)):
            fields = self.at(version).argument_fields(canonical)
            return frozenset(fields) if fields else None
        short = (canonical or cls).rpartition(".")[2]
        if short in self._raw["classes"]:
            method = self.at(version).method("__init__", short)
            return None if method is None else frozenset(p.name for p in method.signature.call_params)
        return None

    def argument_ranges(
        self, name: str, cls: str = DEFAULT_ARGUMENTS_CLASS
    ) -> tuple[tuple[str, str | None], ...]:
        """The release runs in which ``cls`` accepts the argument ``name`` (``last`` ``None``: still there).

        ``cls``: an arguments/config class (its dataclass fields, inherited ones within this library) or a
        trainer class (its ``__init__`` parameters, e.g. ``"Trainer"``).
        """
        present = [i for i in range(len(self.versions)) if name in (self._argument_names_at(cls, i) or ())]
        return tuple((self.versions[a], self._open_end(b)) for a, b in _runs(present))

    def argument_history(
        self, name: str, cls: str = DEFAULT_ARGUMENTS_CLASS
    ) -> tuple[str, str | None] | None:
        """``(first, last)`` covered releases in which ``cls`` accepts ``name``; ``last`` is ``None`` while
        the newest still does; ``None`` if no covered release has it. See :meth:`argument_ranges`."""
        runs = self.argument_ranges(name, cls)
        if not runs:
            return None
        return (runs[0][0], runs[-1][1])

    def renamed_argument(
        self, name: str, cls: str = DEFAULT_ARGUMENTS_CLASS, *, exact_only: bool = True
    ) -> Rename | None:
        """The replacement of a deprecated or removed argument, or ``None``.

        Derived from the source (deprecation shims such as ``self.eval_strategy = self.evaluation_strategy``
        or ``@deprecate_kwarg("tokenizer", new_name="processing_class")``, and "use `x` instead" notes) and
        from ``data/argument-renames.json`` (hand-written, wins). Renames declared on a base class apply
        (``Seq2SeqTrainingArguments`` inherits ``TrainingArguments``'). ``exact_only``: only one-to-one
        renames (the same value can be passed under the new name).
        """
        canonical = self.resolve_class(cls)
        if canonical is None:
            return None
        for version in reversed(self.versions):
            chain = self.at(version).mro(canonical)
            for klass in chain:
                entry = self._arguments.rename_entries(klass, name)
                if entry is None or not entry.get("new"):
                    continue
                if exact_only and not entry.get("exact"):
                    continue
                return self._rename(entry, canonical)
        return None

    def argument_renames(self, *, exact_only: bool = False) -> tuple[Rename, ...]:
        """Every known rename of this library (see :meth:`renamed_argument`)."""
        return tuple(
            self._rename(e, e["cls"])
            for e in self._arguments.all_renames
            if e.get("new") and (e.get("exact") or not exact_only)
        )

    def _rename(self, entry: dict[str, Any], cls: str) -> Rename:
        old, new = entry["old"], entry["new"]
        old_runs = self.argument_ranges(old, cls)
        new_runs = self.argument_ranges(new, cls)
        shim_last = max((self._index[b] for _, b in entry.get("shim", [])), default=-1)
        old_last = -1
        if old_runs:
            old_last = len(self.versions) - 1 if old_runs[-1][1] is None else self._index[old_runs[-1][1]]
        last = max(old_last, shim_last)
        evidence = entry.get("evidence", "")
        exact_since = entry.get("exact_since")  # hand-written, else the derived shim's release
        if isinstance(evidence, list) and exact_since is None:
            exact_since = evidence[0]
        if isinstance(evidence, list):  # [version, note] as derived from the source
            evidence = (
                f"{evidence[1]} (transformers {evidence[0]})"
                if self.library == "transformers"
                else (f"{evidence[1]} ({self.library} {evidence[0]})")
            )
        new_since = new_runs[0][0] if new_runs else None
        if new_since is None and self.library != "transformers":
            # A TrainingArguments field a TRL config inherits (``exp_name`` -> ``run_name``): it exists
            # wherever the class does.
            present = [
                v
                for v in self.versions
                if "transformers.training_args.TrainingArguments" in self.at(v).mro(cls)
            ]
            new_since = present[0] if present else None
        return Rename(
            old=old,
            new=new,
            new_since=new_since,
            old_until=None
            if last == len(self.versions) - 1
            else (self.versions[last] if last >= 0 else None),
            exact=bool(entry.get("exact")),
            evidence=str(evidence),
            cls=entry["cls"],
            exact_since=exact_since
            if exact_since in self._index
            and (new_since is None or self._index[exact_since] > self._index[new_since])
            else None,
        )

    # ---------------------------------------------------------------------------------- hand-written data

    def guidance(self, name: str) -> Guidance | None:
        return self._book.guidance.get(name)

    def guidance_names(self) -> tuple[str, ...]:
        return tuple(sorted(self._book.guidance))

    def purpose(self, name: str) -> str | None:
        """One hand-written sentence on what a method does (``None`` if not written)."""
        return self._book.purposes.get(name)

    def alternative(self, name: str) -> str | None:
        """Short hand-written "use this instead / safe override form" for a method, if any."""
        return self._book.alternatives.get(name)

    # ------------------------------------------------------------------------------------------ internals

    def _class(self, cls: str) -> dict[str, Any]:
        try:
            found: dict[str, Any] = self._raw["classes"][cls]
            return found
        except KeyError:
            known = ", ".join(self._raw["classes"])
            raise KeyError(f"class {cls!r} is not in the {self.library} catalogue (known: {known})") from None

    def _find(self, spans: list[list[Any]], index: int) -> list[Any] | None:
        for span in spans:
            if self._index[span[0]] <= index <= self._index[span[1]]:
                return span
        return None

    def _indices(self, spans: list[list[Any]]) -> set[int]:
        return {i for span in spans for i in range(self._index[span[0]], self._index[span[1]] + 1)}

    def _open_end(self, index: int) -> str | None:
        return None if index == len(self.versions) - 1 else self.versions[index]

    def _event(self, name: str, kwargs: tuple[str, ...]) -> EventInfo:
        spans = self._raw["events"][name]
        last = self._index[spans[-1][1]]
        order, fires = self._book.events.get(name, (len(self._book.events) + 100, ""))
        return EventInfo(
            name=name,
            order=order,
            fires=fires,
            kwargs=kwargs,
            since=spans[0][0],
            until=self._open_end(last),
        )


def _event_key(event: EventInfo | None) -> tuple[int, str]:
    assert event is not None
    return (event.order, event.name)


def _c3(cls: str, bases_of: Any) -> tuple[str, ...]:
    """C3 linearisation of ``cls`` (``bases_of(c)`` -> direct bases); depth-first order if C3 fails."""
    memo: dict[str, tuple[str, ...]] = {}

    def linearise(c: str, stack: frozenset[str]) -> tuple[str, ...]:
        if c in memo:
            return memo[c]
        if c in stack:
            return (c,)
        bases = tuple(bases_of(c))
        sequences = [list(linearise(b, stack | {c})) for b in bases] + [list(bases)]
        out = [c]
        while any(sequences):
            for seq in sequences:
                if not seq:
                    continue
                head = seq[0]
                if not any(head in other[1:] for other in sequences):
                    break
            else:  # inconsistent hierarchy: depth-first, first occurrence wins
                rest = [x for seq in sequences for x in seq]
                out.extend(dict.fromkeys(x for x in rest if x not in out))
                break
            out.append(head)
            sequences = [s[1:] if s and s[0] == head else s for s in sequences]
        memo[c] = tuple(out)
        return memo[c]

    return linearise(cls, frozenset())


def _ids_of(releases: tuple[str, ...], index: Mapping[str, int], states: list[Any]) -> tuple[int, ...]:
    """Run ids for ``releases``: a new id where the state changes or a covered release is skipped."""
    out: list[int] = []
    run = 0
    for i, version in enumerate(releases):
        if i and (states[i] != states[i - 1] or index[version] != index[releases[i - 1]] + 1):
            run += 1
        out.append(run)
    return tuple(out)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs ``[(start, end), ...]`` of sorted integers."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] + 1 == i:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def load_catalog(library: str = "transformers") -> Catalog:
    """The catalogue of ``library`` (cached per process). Raises ``ValueError`` for an unknown library."""
    return _load_catalog(library)


@cache  # keyed by the name alone: ``load_catalog()`` and ``load_catalog("transformers")`` share one (4 ms each)
def _load_catalog(library: str) -> Catalog:
    if "-" in library or os.sep in library or library == "guidance":  # the fact files beside the catalogues
        raise ValueError(f"no catalogue for library {library!r}")
    try:
        with open(os.path.join(DATA_DIR, f"{library}.json"), encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        available = ", ".join(
            sorted(
                n[:-5]
                for n in os.listdir(DATA_DIR)
                if n.endswith(".json") and "-" not in n and n != "guidance.json"
            )
        )
        raise ValueError(f"no catalogue for library {library!r} (available: {available})") from None
    raw = json.loads(text)
    added, problems = _added_releases(library, raw["versions"][-1])
    return Catalog(raw, load_guidance_book(library), added, problems)


def _added_releases(library: str, newest: str) -> tuple[tuple[usercache.AddedRelease, ...], tuple[str, ...]]:
    """Releases after the shipped ``newest``: ``catalog add`` ones, and the installed one (it wins for its
    version: it is the code that runs). A source that cannot be read is a problem, never a crash."""
    if library not in usercache.LIBRARIES:
        return (), ()
    by_version = {a.version: a for a in usercache.added_releases(library, newest)}
    problems: tuple[str, ...] = ()
    try:
        installed = usercache.installed_release(library, newest)
    except Exception as exc:  # noqa: BLE001 - any failure to read it leaves it uncovered, with a warning
        installed = None
        problems = (
            f"the installed {library} is newer than the catalogue but its facts could not be read: {exc}",
        )
    if installed is not None:
        by_version[installed.version] = installed
    ordered = sorted(by_version, key=version_key)
    return tuple(by_version[v] for v in ordered), problems


def installed_version(dist: str = "transformers") -> str | None:
    """Version of an installed distribution from its metadata; never imports the package itself.

    Read from the ``<name>-<version>.dist-info`` folder names on ``sys.path``
    (:mod:`trainwright.catalog.distributions`); ``.egg-info`` metadata (old develop installs) is read too."""
    for entry, name in metadata_folders(dist):
        if name.endswith(".dist-info"):
            version: str | None = name[: -len(".dist-info")].partition("-")[2]
            if version:
                return version
        else:
            version = _pkg_info_version(os.path.join(entry, name))
            if version:
                return version
    return None


def _pkg_info_version(path: str) -> str | None:
    info = os.path.join(path, "PKG-INFO") if os.path.isdir(path) else path
    try:
        with open(info, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        return None
    return None


def target_version(explicit: str | None = None, library: str = "transformers") -> str:
    """The covered release to check against: ``explicit`` > installed > newest, resolved to a covered one."""
    catalog = load_catalog(library)
    chosen = explicit if explicit is not None else installed_version(library)
    return catalog.resolve_version(chosen)


__all__ = [
    "Catalog",
    "VersionView",
    "installed_version",
    "is_private",
    "load_catalog",
    "target_version",
    "version_key",
]
