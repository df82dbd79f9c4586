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

from trainwright.catalog.guidance import GuidanceBook, load_guidance_book
from trainwright.catalog.model import (
    PARAM_KINDS,
    CallSite,
    EventInfo,
    Guidance,
    MethodHistory,
    MethodInfo,
    Param,
    Signature,
)
from trainwright.catalog.versions import nearest_at_or_below, version_key

SUPPORTED_FORMAT = 1
DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
DEFAULT_CLASS = "Trainer"


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
        find = self._catalog._find
        definition = find(entry["defs"], self._index)
        if definition is None:
            return None
        owner, kind, params = definition[2:]
        calls = find(entry["calls"], self._index)
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
            called=find(entry["called"], self._index) is not None,
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


class Catalog:
    """Trainer API of one library across its covered releases (see the module docstring)."""

    def __init__(self, raw: dict[str, Any], guidance: GuidanceBook) -> None:
        if raw.get("format") != SUPPORTED_FORMAT:
            raise ValueError(
                f"catalogue data format {raw.get('format')!r} is not supported (expected {SUPPORTED_FORMAT}); "
                "regenerate it with scripts/build_catalog.py"
            )
        self._raw = raw
        self._book = guidance
        self.library: str = raw["library"]
        self.versions: tuple[str, ...] = tuple(raw["versions"])
        self._index = {v: i for i, v in enumerate(self.versions)}
        self._views: dict[str, VersionView] = {}

    def __repr__(self) -> str:
        return f"Catalog({self.library}, {self.versions[0]}..{self.newest}, {len(self.versions)} releases)"

    @property
    def newest(self) -> str:
        return self.versions[-1]

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

    def called_versions(self, name: str, cls: str = DEFAULT_CLASS) -> tuple[str, ...]:
        """The covered releases in which the library itself calls (or passes on) ``name``."""
        entry = self._class(cls).get(name)
        if entry is None:
            return ()
        return tuple(self.versions[i] for i in sorted(self._indices(entry["called"])))

    def call_history(
        self, name: str, cls: str = DEFAULT_CLASS
    ) -> tuple[tuple[str, str | None, tuple[CallSite, ...]], ...]:
        """How the library calls ``name`` over releases: ``((first, last|None, call_sites), ...)``.

        Only ranges with at least one call site are listed (a method passed around by reference is
        "called" without a visible call site).
        """
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
            e.name for e in sorted((self.event_history(n) for n in self._raw["events"]), key=_event_key)
        )

    def event_history(self, name: str) -> EventInfo | None:
        """The event over all covered releases; ``kwargs`` are those of the newest release that has it."""
        spans = self._raw["events"].get(name)
        if not spans:
            return None
        return self._event(name, tuple(spans[-1][2]))

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
            return self._raw["classes"][cls]
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


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs ``[(start, end), ...]`` of sorted integers."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] + 1 == i:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


@cache
def load_catalog(library: str = "transformers") -> Catalog:
    """The catalogue of ``library`` (cached per process). Raises ``ValueError`` for an unknown library."""
    try:
        with open(os.path.join(DATA_DIR, f"{library}.json"), encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        available = ", ".join(
            sorted(n[:-5] for n in os.listdir(DATA_DIR) if n.endswith(".json") and n != "guidance.json")
        )
        raise ValueError(f"no catalogue for library {library!r} (available: {available})") from None
    return Catalog(json.loads(text), load_guidance_book(library))


def installed_version(dist: str = "transformers") -> str | None:
    """Version of an installed distribution from its metadata; never imports the package itself."""
    # Imported here: importlib.metadata costs ~20 ms to import and most pre-commit runs pass a version.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
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
