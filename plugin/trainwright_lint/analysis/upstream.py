"""Which statements of an override were copied from transformers' or TRL's own method.

Overrides of loop methods are often copies of upstream (a whole ``_inner_training_loop`` from 4.3x,
TRL's ``training_step`` keeping the Trainer's ``torch_empty_cache_steps`` block). A copied statement
is upstream's behaviour, not a decision the user made, so no TW2xx finding may fall on it. The
catalogue keeps the fingerprints of every upstream method body per release
(``trainwright.catalog.fingerprint``: a statement's fingerprint includes the chain of conditions
around it, so the same statement under the user's own ``if`` is the user's).

A top-level statement counts as copied only from the upstream method of the same name (``return
loss`` is in many methods); a nested one from any method of the same library, since copies move code
between methods (4.x's ``_inner_training_loop`` became 5.3's ``_run_epoch``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trainwright_lint.analysis.effects import MethodEffects
from trainwright_lint.analysis.facts import FINGERPRINTS, FactStore
from trainwright_lint.syntax import FunctionNode

from trainwright.catalog import Catalog
from trainwright.catalog.fingerprint import LazyFingerprints


def _fingerprints(fn: FunctionNode, facts: FactStore) -> LazyFingerprints:
    """The fingerprints of ``fn``'s statements, a fact of its file (``facts``: the ``FileUnit``'s store)
    computed as asked for: TW101's copy note needs all of them, the TW2xx rules a few
    (``CopiedStatements``), and one object serves both, so no statement of a long loop copy is
    normalised twice."""
    return facts.get(FINGERPRINTS, (fn.lineno, fn.col_offset), lambda: LazyFingerprints(fn))  # type: ignore[no-any-return]


class CopiedStatements:
    """Which statements of ``fn`` (indices into ``effects.statements``) were copied from upstream
    code of ``owners`` (``(catalog, class)`` pairs: the library classes of the MRO that define the
    method). Answered per statement (``i in copied``): the rules ask only about the few statements
    they would report, and fingerprinting all of a long override costs more than its analysis."""

    def __init__(
        self,
        fn: FunctionNode,
        effects: MethodEffects,
        owners: Sequence[tuple[Catalog, str]],
        facts: FactStore,
    ) -> None:
        self._fn = fn
        self._facts = facts
        self._effects = effects
        self._upstreams = [catalog.upstream_fingerprints() for catalog, _cls in owners]
        self._fingerprints: LazyFingerprints | None = None
        self._answers: dict[int, bool] = {}

    def __contains__(self, index: int) -> bool:
        found = self._answers.get(index)
        if found is None:
            found = self._answers[index] = self._copied(index)
        return found

    def _copied(self, index: int) -> bool:
        if not self._upstreams:
            return False
        if self._fingerprints is None:
            self._fingerprints = _fingerprints(self._fn, self._facts)
        s = self._effects.statements[index]
        fp = self._fingerprints.of(s.node)
        if fp is None:
            return False
        for upstream in self._upstreams:
            if fp in upstream and (
                s.depth > 0 or any(o.method == self._fn.name for o in upstream.owners(fp))
            ):
                return True
        return False


@dataclass(frozen=True)
class Copy:
    """An override that is mostly a copy of one upstream release's method."""

    owner: str  # "Trainer._inner_training_loop"
    library: str
    release: str
    changed: int  # statements of the override that are not upstream's


def copy_of(
    fn: FunctionNode, owners: Sequence[tuple[Catalog, str]], facts: FactStore, threshold: float = 0.5
) -> Copy | None:
    """The upstream release ``fn`` is a copy of, when at least ``threshold`` of its statements (and at
    least five) are that release's (``facts``: the store of ``fn``'s file)."""
    fingerprints = [fp for fp, _ in _fingerprints(fn, facts).all()]
    if len(fingerprints) < 5:
        return None
    distinct = set(fingerprints)
    best: Copy | None = None
    best_matching = 0
    for catalog, cls in owners:
        upstream = catalog.upstream_fingerprints()
        if sum(fp in upstream for fp in distinct) < threshold * len(distinct):
            continue  # fewer statements of any upstream release than a copy needs: not a copy
        match = upstream.best_release(cls, fn.name, fingerprints)
        if match is None or match.matching < threshold * len(distinct) or match.matching <= best_matching:
            continue
        best_matching = match.matching
        short = cls.rsplit(".", 1)[-1]
        best = Copy(f"{short}.{fn.name}", catalog.library, match.version, match.total - match.matching)
    return best
