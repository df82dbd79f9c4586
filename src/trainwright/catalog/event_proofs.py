"""The linter's extract of the event table (``transformers-event-proofs.json``), read on its own.

Why a module of its own: every lint that meets a TW201/TW202 candidate reads these proofs, and nothing
else of ``trainwright.catalog.events`` (call paths, hops, keyword arguments, which ``trainwright explain``
and the tracing test use). Kept apart, a lint imports no dataclass machinery for the table and parses
nothing it does not read; the answers are computed once per process and kept (``ProofTables`` caches
each target range's distinct tables and each method's proof), because the same few methods are asked
about for every class of every file.

Pure data: importing this module never imports torch or transformers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache
from typing import Any

from trainwright.catalog.versions import nearest_at_or_below, sort_versions

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
# ``scripts/build_events.py: proofs`` writes it from the full table; loaded on lint, so kept small.
PROOFS_FILE = os.path.join(DATA_DIR, "transformers-event-proofs.json")
FORMAT = 1


def read_data(path: str, what: str) -> dict[str, Any]:
    """A data file of the event table, or a ``FileNotFoundError`` naming it and how to make it."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{what} {path} is missing: regenerate it with scripts/build_events.py"
        ) from None


class MethodProof:
    """What a move proof needs of one method at one release: ``inside``, the events it fires itself on
    every run, and ``paths``, per distinct path shape, whether only an opt-in integration takes it and
    the events around it. A plain slotted class: read-only by convention, built once per (table, method)."""

    __slots__ = ("inside", "paths")

    def __init__(self, inside: frozenset[str], paths: tuple[tuple[bool, frozenset[str]], ...]) -> None:
        self.inside = inside
        self.paths = paths

    def __repr__(self) -> str:
        return f"MethodProof(inside={self.inside!r}, paths={self.paths!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MethodProof) and (self.inside, self.paths) == (other.inside, other.paths)

    def __hash__(self) -> int:
        return hash((self.inside, self.paths))


class ProofTables:
    """``transformers-event-proofs.json``: per release, ``MethodProof`` of every Trainer method."""

    def __init__(self, data: dict[str, Any]) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(f"{PROOFS_FILE}: format {data.get('format')!r}, expected {FORMAT}")
        self._releases: dict[str, int] = data["releases"]
        self._tables: list[dict[str, int]] = data["tables"]
        self._entries: list[list[Any]] = data["entries"]
        self.versions: tuple[str, ...] = sort_versions(list(self._releases))
        # a target range resolves the same way for every class it is asked about (64 releases: 64 bisects)
        self._across: dict[tuple[str, ...], tuple[tuple[str, int], ...]] = {}
        self._methods: dict[tuple[int, str], MethodProof | None] = {}

    def across(self, versions: Sequence[str]) -> tuple[tuple[str, int], ...]:
        """(release, table index) for each distinct table of ``versions``."""
        key = tuple(versions)
        found = self._across.get(key)
        if found is None:
            seen: dict[int, str] = {}
            for v in key:
                resolved = nearest_at_or_below(v, self.versions)
                seen.setdefault(self._releases[resolved], resolved)
            found = self._across[key] = tuple((v, i) for i, v in seen.items())
        return found

    def method(self, table: int, name: str) -> MethodProof | None:
        key = (table, name)
        if key not in self._methods:
            index = self._tables[table].get(name)
            if index is None:
                self._methods[key] = None
            else:
                inside, paths = self._entries[index]
                self._methods[key] = MethodProof(
                    frozenset(inside), tuple((bool(o), frozenset(e)) for o, e in paths)
                )
        return self._methods[key]


@cache
def load_proofs() -> ProofTables:
    """The linter's extract of the event table (read once per process)."""
    return ProofTables(read_data(PROOFS_FILE, "the event proofs"))
