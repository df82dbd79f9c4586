"""Events as data: which ``TrainerCallback`` events fire around each ``Trainer`` method, on every call
path that reaches it from a public entry point (``train``, ``evaluate``, ``predict``, ``save_model``,
``push_to_hub``, ...), per transformers release, with the keyword arguments each event receives.

Why a table: "move this to a callback" is only a proposal when the event fires wherever the method
runs. ``on_save`` fires after ``_save_checkpoint`` inside the training loop, but ``save_model`` also runs
from a user's ``trainer.save_model()`` and from ``push_to_hub``, where no event fires; a file written in a
``save_model`` override cannot move to ``on_save`` without vanishing from the final model folder. The
table answers that question from transformers' own source (``scripts/build_events.py`` derives it with
``ast``; ``tests/catalog/test_events_trace.py`` checks it against a real Trainer run).

Pure data: importing this module never imports torch or transformers.

    >>> from trainwright.catalog.events import load_events
    >>> table = load_events().at("5.24.0")
    >>> table.fires_on_every_path("save_model", "on_save")
    False
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

# the linter's extract of the table lives in ``event_proofs`` (a lint imports only that); named here too
from trainwright.catalog.event_proofs import (
    FORMAT,
    PROOFS_FILE,
    MethodProof,
    ProofTables,
    load_proofs,
    read_data,
)
from trainwright.catalog.versions import nearest_at_or_below, sort_versions

DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "transformers-events.json")

__all__ = [
    "DATA_FILE", "FORMAT", "PROOFS_FILE", "CallPath", "EventTables", "Hop", "MethodProof", "ProofTables",
    "ReleaseEvents", "load_events", "load_proofs",
]  # fmt: skip


@dataclass(frozen=True)
class Hop:
    """One call on a path: ``caller`` calls the next method; the events ``caller`` fires before that
    call, after it, and ``around`` it (in a loop that encloses the call: they fire between iterations)."""

    caller: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    around: tuple[str, ...]


@dataclass(frozen=True)
class CallPath:
    """``entry`` -> ``via`` ... -> the method. ``hops`` is empty when the method is the entry point."""

    entry: str
    via: tuple[str, ...]
    hops: tuple[Hop, ...]

    @property
    def methods(self) -> tuple[str, ...]:
        return (self.entry, *self.via)

    def events(self) -> set[str]:
        """Every event its callers fire before, after or around the method on this path."""
        out: set[str] = set()
        for h in self.hops:
            out.update(h.before, h.after, h.around)
        return out

    def near(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Events the nearest caller that fires any fires (before, after) the call: the ones that
        bracket the method on this path (``_run_epoch``'s ``on_step_begin``/``on_step_end`` around
        ``training_step``), innermost caller first."""
        for h in reversed(self.hops):
            if h.before or h.after:
                return h.before, h.after
        return (), ()

    def text(self, method: str) -> str:
        return " -> ".join((*self.methods, method)) if self.hops else f"{method} (called directly)"


@dataclass
class ReleaseEvents:
    """The event table of one release (paths are parsed on first use, per method)."""

    version: str
    entries: tuple[str, ...]
    kwargs: dict[str, tuple[str, ...]]
    _methods: dict[str, Any]
    _pool: _Pool
    _parsed: dict[str, tuple[CallPath, ...]] = field(default_factory=dict)

    def knows(self, method: str) -> bool:
        return method in self._methods

    def inside(self, method: str) -> tuple[str, ...]:
        """Events ``method`` fires on every run, itself or through the methods it calls."""
        return tuple(self._methods.get(method, {}).get("inside", ()))

    def maybe(self, method: str) -> tuple[str, ...]:
        """Events ``method`` fires only under a condition (``save_model``'s ``on_push_begin``)."""
        return tuple(self._methods.get(method, {}).get("maybe", ()))

    def paths(self, method: str) -> tuple[CallPath, ...]:
        """Every call path from an entry point to ``method`` (empty for a method nothing calls)."""
        if method not in self._parsed:
            ids = self._methods.get(method, {}).get("paths", [])
            self._parsed[method] = tuple(self._pool.path(i) for i in ids)
        return self._parsed[method]

    def fires_on_every_path(self, method: str, event: str, extra_callers: Iterable[str] = ()) -> bool:
        """``event`` fires inside ``method`` or on every path that reaches it (callers' events before,
        after or around the call). ``extra_callers``: places in the project that call the method
        directly (``trainer.save_model()`` in a script): a path on which no event fires."""
        if event in self.inside(method):
            return True
        if any(True for _ in extra_callers):
            return False
        paths = self.paths(method)
        return bool(paths) and all(event in p.events() for p in paths)

    def receives(self, event: str) -> tuple[str, ...]:
        """The keyword arguments ``event`` receives (``args``, ``state``, ``control`` first)."""
        return self.kwargs.get(event, ())


class _Pool:
    """The file's pooled hops and paths (``scripts/build_events.py: pack``), built on first use."""

    def __init__(self, hops: list[list[Any]], paths: list[list[Any]]) -> None:
        self._hops, self._paths = hops, paths
        self._built: dict[int, CallPath] = {}

    def path(self, index: int) -> CallPath:
        if index not in self._built:
            entry, hop_ids = self._paths[index]
            hops = tuple(
                Hop(c, tuple(b), tuple(a), tuple(r)) for c, b, a, r in (self._hops[i] for i in hop_ids)
            )
            self._built[index] = CallPath(entry=entry, via=tuple(h.caller for h in hops[1:]), hops=hops)
        return self._built[index]


class EventTables:
    """Every release's table; ``at(version)`` resolves an uncovered release to the nearest one below."""

    def __init__(self, data: dict[str, Any]) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(f"{DATA_FILE}: format {data.get('format')!r}, expected {FORMAT}")
        self._tables: list[dict[str, Any]] = data["tables"]
        self._pool = _Pool(data["hops"], data["paths"])
        self._releases: dict[str, int] = data["releases"]
        self.versions: tuple[str, ...] = sort_versions(list(self._releases))
        self._views: dict[str, ReleaseEvents] = {}

    def at(self, version: str) -> ReleaseEvents:
        return self._view(nearest_at_or_below(version, self.versions))

    def across(self, versions: Sequence[str]) -> tuple[ReleaseEvents, ...]:
        """The distinct tables for ``versions`` (a target range): one per distinct release table."""
        seen: dict[int, ReleaseEvents] = {}
        for v in versions:
            resolved = nearest_at_or_below(v, self.versions)
            seen.setdefault(self._releases[resolved], self._view(resolved))
        return tuple(seen.values())

    def _view(self, version: str) -> ReleaseEvents:
        if version in self._views:
            return self._views[version]
        table = self._tables[self._releases[version]]
        self._views[version] = ReleaseEvents(
            version=version,
            entries=tuple(table["entries"]),
            kwargs={e: tuple(k) for e, k in table["events"].items()},
            _methods=table["methods"],
            _pool=self._pool,
        )
        return self._views[version]


@cache
def load_events() -> EventTables:
    """The packaged table (read once per process). Raises ``FileNotFoundError`` naming the file."""
    return EventTables(read_data(DATA_FILE, "the event table"))
