"""The linter's fuzz target in CI: a fixed seed, a 50-second time box, and nothing found.

Half the time goes to hypothesmith programs (bare and inside a Trainer subclass, with a hostile change
each) through lint and fix, half to hostile project configurations through the CLI; see
``fuzz_lint.py``. ``scripts/fuzz.py --minutes N`` runs the same target longer with fresh seeds, and
``--replay SEED`` re-runs a failing project case. The seed is fixed here so that a CI failure
reproduces (within the time box, a slower machine runs a prefix of the same cases).
"""

from __future__ import annotations

import fuzz_lint
import pytest

SEED = 38
SECONDS = 50.0


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code such as `"a"()`
def test_fuzz_target_finds_nothing() -> None:
    failures = fuzz_lint.run(SEED, SECONDS)
    report = "\n\n".join(f"{f.kind} seed {f.seed}: {f.what}\n{f.error}" for f in failures[:5])
    assert not failures, f"{len(failures)} failure(s); the first:\n{report}"
