"""Upstream statement fingerprints: which catalogued method (and release) a statement was copied from.

Data: ``data/<library>-fingerprints.json``, written by the catalogue builders with
:mod:`trainwright.catalog.fingerprint` over every method of ``Trainer``/``Seq2SeqTrainer`` (transformers)
or of every TRL trainer class and its TRL bases, in every covered release. Loaded only when
:meth:`Catalog.upstream_fingerprints` is first called, so ``load_catalog()`` stays cheap.

Layout::

    {"normaliser": N, "versions": [...],
     "methods": [[class, method, [[first, last], ...]], ...],      # where each method is defined
     "statements": {fingerprint: [method_index, first_index, last_index, ...]}}   # flat triples

Classes are canonical dotted names (``transformers.trainer.Trainer``,
``trl.trainer.grpo_trainer.GRPOTrainer``); a method is stored under the class that defines it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from trainwright.catalog.fingerprint import NORMALISER_VERSION
from trainwright.catalog.model import CatalogReleases, ReleaseMatch, StatementOwner


class UpstreamFingerprints:
    """The statement fingerprints of one library's catalogued methods across its covered releases."""

    def __init__(self, catalog: CatalogReleases, raw: dict[str, Any]) -> None:
        if raw.get("normaliser") != NORMALISER_VERSION:
            raise ValueError(
                f"{catalog.library} fingerprints were built with normaliser {raw.get('normaliser')!r}, "
                f"this trainwright computes version {NORMALISER_VERSION}; regenerate the catalogue"
            )
        if tuple(raw["versions"]) != catalog.versions:
            raise ValueError(f"{catalog.library} fingerprints cover other releases than the catalogue")
        self._catalog = catalog
        self.library = catalog.library
        self.versions: tuple[str, ...] = catalog.versions
        self._methods: list[tuple[str, str]] = [(c, m) for c, m, _ in raw["methods"]]
        self._method_index = {key: i for i, key in enumerate(self._methods)}
        self._defined: list[list[tuple[int, int]]] = [
            [(catalog._index[a], catalog._index[b]) for a, b in spans] for _, _, spans in raw["methods"]
        ]
        self._statements: dict[str, list[int]] = raw["statements"]
        self._by_method: list[list[tuple[str, int, int]]] | None = None
        self._owners: dict[tuple[str, str, str], int | None] = {}
        self._mros: dict[tuple[str, str], tuple[str, ...]] = {}

    def __repr__(self) -> str:
        return (
            f"UpstreamFingerprints({self.library}, {len(self._methods)} methods, "
            f"{len(self._statements)} distinct statements)"
        )

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self._statements

    def __len__(self) -> int:
        return len(self._statements)

    # ------------------------------------------------------------------------------------------- lookups

    def owners(self, fingerprint: str) -> tuple[StatementOwner, ...]:
        """Every (class, method, release range) whose body contains a statement with this fingerprint.

        ``last`` is ``None`` while the statement is still there in the newest covered release. Empty for a
        statement that no catalogued method has: the user's own code.
        """
        flat = self._statements.get(fingerprint)
        if not flat:
            return ()
        out = []
        for i in range(0, len(flat), 3):
            cls, method = self._methods[flat[i]]
            out.append(StatementOwner(cls, method, self.versions[flat[i + 1]], self._open_end(flat[i + 2])))
        return tuple(out)

    def method_names(self) -> tuple[tuple[str, str], ...]:
        """``(class, method)`` of every fingerprinted method (classes as canonical dotted names)."""
        return tuple(self._methods)

    def method(self, cls: str, name: str, version: str | None = None) -> frozenset[str]:
        """The fingerprints of ``cls.name`` at ``version`` (default newest); inherited methods included.

        ``cls`` may be a short name (``"Trainer"``, ``"GRPOTrainer"``) or a dotted one (canonical or a
        public alias). A method inherited from another library's class (a TRL trainer's ``training_step``
        that is ``transformers.Trainer``'s) is not here: ask that library's catalogue. Empty when unknown.
        """
        resolved = self._catalog.resolve_version(version)
        index = self._catalog._index[resolved]
        m = self._owner_method(cls, name, resolved)
        if m is None:
            return frozenset()
        return frozenset(fp for fp, a, b in self._entries()[m] if a <= index <= b)

    def defining_class(self, cls: str, name: str, version: str | None = None) -> str | None:
        """The canonical class whose definition of ``name`` ``cls`` uses at ``version`` (MRO order)."""
        resolved = self._catalog.resolve_version(version)
        m = self._owner_method(cls, name, resolved)
        return None if m is None else self._methods[m][0]

    def match_counts(self, cls: str, name: str, fingerprints: Iterable[str]) -> dict[str, tuple[int, int]]:
        """``release -> (matching, upstream_total)`` for every release where ``cls.name`` is defined.

        ``matching``: how many of the distinct ``fingerprints`` the upstream method has at that release;
        ``upstream_total``: how many distinct statements the upstream method has there.
        """
        wanted = set(fingerprints)
        per_owner: dict[int, list[int]] = {}  # defining method -> the release indices that use it
        for index, version in enumerate(self.versions):
            m = self._owner_method(cls, name, version)
            if m is not None:
                per_owner.setdefault(m, []).append(index)
        n = len(self.versions)
        counts: dict[int, tuple[int, int]] = {}
        for m, indices in per_owner.items():
            matching = [0] * (n + 1)  # difference arrays over release indices
            total = [0] * (n + 1)
            for fp, a, b in self._entries()[m]:
                total[a] += 1
                total[b + 1] -= 1
                if fp in wanted:
                    matching[a] += 1
                    matching[b + 1] -= 1
            running_m = running_t = 0
            wanted_indices = set(indices)
            for i in range(n):
                running_m += matching[i]
                running_t += total[i]
                if i in wanted_indices:
                    counts[i] = (running_m, running_t)
        return {self.versions[i]: counts[i] for i in sorted(counts)}

    def best_release(self, cls: str, name: str, fingerprints: Iterable[str]) -> ReleaseMatch | None:
        """The release whose ``cls.name`` the given statements (a user's override) are closest to.

        Most matching statements wins; ties go to the release with the fewest upstream statements missing
        from the override, then to the earliest such release (the first one with that code). ``total`` is
        the number of distinct fingerprints given, so ``total - matching`` statements are the user's own.
        ``None`` when the method is not catalogued.
        """
        wanted = set(fingerprints)
        best: tuple[int, int, int] | None = None
        best_version = None
        for version, (matching, upstream_total) in self.match_counts(cls, name, wanted).items():
            score = (matching, -(upstream_total - matching), -self._catalog._index[version])
            if best is None or score > best:
                best, best_version = score, version
        if best is None or best_version is None:
            return None
        return ReleaseMatch(best_version, best[0], len(wanted))

    # ------------------------------------------------------------------------------------------ internals

    def _open_end(self, index: int) -> str | None:
        return None if index == len(self.versions) - 1 else self.versions[index]

    def _entries(self) -> list[list[tuple[str, int, int]]]:
        """Per method index: ``(fingerprint, first_index, last_index)`` (built once, on first use)."""
        if self._by_method is None:
            by_method: list[list[tuple[str, int, int]]] = [[] for _ in self._methods]
            for fp, flat in self._statements.items():
                for i in range(0, len(flat), 3):
                    by_method[flat[i]].append((fp, flat[i + 1], flat[i + 2]))
            self._by_method = by_method
        return self._by_method

    def _defines(self, m: int, index: int) -> bool:
        return any(a <= index <= b for a, b in self._defined[m])

    def _owner_method(self, cls: str, name: str, version: str) -> int | None:
        """The method index whose definition ``cls.name`` uses at ``version`` (memoised: copy detection
        asks for every release of every overridden method, and each answer walks an MRO)."""
        key = (cls, name, version)
        if key not in self._owners:
            self._owners[key] = self._find_owner_method(cls, name, version)
        return self._owners[key]

    def _find_owner_method(self, cls: str, name: str, version: str) -> int | None:
        index = self._catalog._index[version]
        for klass in self._mro(cls, version):
            m = self._method_index.get((klass, name))
            if m is not None and self._defines(m, index):
                return m
        return None

    def _mro(self, cls: str, version: str) -> tuple[str, ...]:
        """``cls`` (resolved to its canonical name at ``version``) and its bases there, memoised."""
        key = (cls, version)
        if key not in self._mros:
            canonical = self._catalog.resolve_class(cls, version) or cls
            self._mros[key] = tuple(self._catalog.at(version).mro(canonical))
        return self._mros[key]


def load_upstream(
    catalog: CatalogReleases,
    data_dir: str,
    extend: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
) -> UpstreamFingerprints:
    """``extend(fact, document)`` appends releases newer than the shipped data (``Catalog._extend_fact``)."""
    path = os.path.join(data_dir, f"{catalog.library}-fingerprints.json")
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        raise ValueError(
            f"no upstream fingerprints for {catalog.library} ({path}); regenerate the catalogue"
        ) from None
    return UpstreamFingerprints(catalog, raw if extend is None else extend("fingerprints", raw))
