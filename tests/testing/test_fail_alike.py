"""A fix that neither causes nor mends a failure is not judged on that release (issue 32).

On 5.24.0 energy-efficient-llm's ``training_step(self, model, inputs)`` stops every phase with the same
``TypeError`` before and after its TW201 move (a moves-only run leaves the signature TW301 fixes). The
moved callback logged one line at the start of training first, so the two records were not identical,
and the matrix judged the crashing fixed program against the original trained on 4.45.2: "different".
Both stop alike, so the case is not runnable there; a difference in a phase that ran to its end is still
the fix's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing.records import Phase, Record, Step

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import oracle_matrix

CRASH = "TypeError: AdaptiveTrainer.training_step() takes 3 positional arguments but 4 were given"
STEPS = (Step(step=1, loss=5.53, grad_norm=1.52), Step(step=2, loss=5.58, grad_norm=1.67))


def _record(*phases: Phase) -> Record:
    return Record(release=oracle_matrix.PINNED, phases=phases)


def _judged(original: Record, fixed: Record) -> oracle_matrix.Case:
    case = oracle_matrix.Case("c", Path("original.py"), Path("fixed.py"), True, ">=4.44,<6")
    keys = oracle_matrix.programs(case)
    records = {(keys[0], original.release): original, (keys[1], fixed.release): fixed}
    oracle_matrix.judge(case, records, [oracle_matrix.PINNED])
    return case


def test_a_line_printed_before_the_same_crash_is_not_a_difference() -> None:
    original = _record(Phase("ga1/train", error=CRASH), Phase("ga2/train", error=CRASH))
    fixed = _record(
        Phase("ga1/train", error=CRASH, lines=("@0 [ERROR] Error loading API keys",)),
        Phase("ga2/train", error=CRASH),
    )
    case = _judged(original, fixed)
    assert case.verdicts == {oracle_matrix.PINNED: "not runnable"}
    assert "fail alike: TypeError" in case.reasons[oracle_matrix.PINNED]


def test_a_phase_that_ran_to_its_end_differently_is_still_the_fixs() -> None:
    halved = tuple(Step(s.step, s.loss / 2, s.grad_norm / 2) for s in STEPS)
    original = _record(Phase("ga1/train", steps=STEPS), Phase("ga2/train", error=CRASH))
    fixed = _record(Phase("ga1/train", steps=halved), Phase("ga2/train", error=CRASH))
    assert not oracle_matrix._fail_alike(original, fixed, oracle_matrix.compare(original, fixed))
    case = _judged(original, fixed)  # no release where the original ran: nothing to judge it against
    assert "fail alike" not in case.reasons[oracle_matrix.PINNED]


def test_a_crash_in_another_phase_or_with_another_error_is_not_alike() -> None:
    original = _record(Phase("ga1/train", error=CRASH), Phase("ga2/train", steps=STEPS))
    moved = _record(Phase("ga1/train", error=CRASH), Phase("ga2/train", error=CRASH))
    other = _record(Phase("ga1/train", error="KeyError: 'loss'"), Phase("ga2/train", steps=STEPS))
    for fixed in (moved, other):
        assert not oracle_matrix._fail_alike(original, fixed, oracle_matrix.compare(original, fixed))
