"""A move's named difference (``compare(..., named=...)``) relaxes exactly what it names: the place of an
``on_log`` within one evaluation. The sequences are the oracle's own records of
``tests/oracle/refused/sample_table_before_evaluation_loop.py`` at step 2 (original, then moved), when that
move was still written (it is refused since 2026-12-06: after the loop the model is in ``eval()``)."""

from __future__ import annotations

from trainwright.testing.compare import (
    AFTER_EVALUATION,
    NESTED_LOG,
    compare,
    logs_within_evaluations,
    named_differences,
)
from trainwright.testing.records import Phase, Record

STEP = ("on_step_begin@1", "on_optimizer_step@1", "on_step_end@2", "on_log@2")
ORIGINAL = (*STEP, "on_log@2", "on_prediction_step@2", "on_log@2", "on_evaluate@2", "on_save@2")
MOVED = (*STEP, "on_prediction_step@2", "on_log@2", "on_log@2", "on_evaluate@2", "on_save@2")


def _record(events: tuple[str, ...]) -> Record:
    return Record(release="5.24.0", phases=(Phase(name="ga1/train", events=events),))


def _differences(a: tuple[str, ...], b: tuple[str, ...], named: tuple[str, ...]) -> list[str]:
    return [d.where for d in compare(_record(a), _record(b), named=named)]


def test_the_named_move_compares_equal_and_only_when_named() -> None:
    assert _differences(ORIGINAL, MOVED, (AFTER_EVALUATION,)) == []
    assert _differences(ORIGINAL, MOVED, ()) != []  # unnamed, the oracle reports the new order


def test_other_changes_in_an_evaluation_are_still_reported() -> None:
    named = (AFTER_EVALUATION,)
    # a log at every prediction step: one more on_log in the evaluation
    more = (*STEP, "on_prediction_step@2", "on_log@2", "on_prediction_step@2", "on_log@2", "on_log@2",
            "on_evaluate@2", "on_save@2")  # fmt: skip
    two = (*STEP, "on_log@2", "on_prediction_step@2", "on_prediction_step@2", "on_log@2", "on_evaluate@2",
           "on_save@2")  # fmt: skip
    assert _differences(two, more, named) != []
    # the log moved out of the evaluation, to the next step's end
    later = (*STEP, "on_prediction_step@2", "on_log@2", "on_evaluate@2", "on_save@2", "on_step_end@3",
             "on_log@3")  # fmt: skip
    assert _differences((*ORIGINAL, "on_step_end@3"), later, named) != []
    # a log that lost the evaluation's step
    assert _differences(ORIGINAL, tuple(e.replace("on_log@2", "on_log@3") for e in MOVED), named) != []


def test_events_outside_evaluations_keep_their_order() -> None:
    events = ("on_step_end@1", "on_log@1", "on_save@1", "on_log@1")
    assert logs_within_evaluations(events) == events


def test_the_difference_is_named_by_the_words_the_fix_writes() -> None:
    doc = '"Code of `T.evaluation_loop`, moved here. It runs after the evaluation loop, not before it."'
    assert named_differences(doc) == (AFTER_EVALUATION,)
    assert named_differences('"Code of `T.training_step`, moved here."') == ()


# ``tests/oracle/moves/log_after_evaluate.py`` at step 2: the evaluation's own log, ``on_evaluate``, then the
# user's log; moved, the user's log is dispatched inside ``on_evaluate`` and recorded before it.
EVALUATED = (*STEP, "on_prediction_step@2", "on_log@2", "on_evaluate@2", "on_log@2", "on_save@2")
NESTED = (*STEP, "on_prediction_step@2", "on_log@2", "on_log@2", "on_evaluate@2", "on_save@2")


def test_a_log_dispatched_inside_its_event_compares_equal_only_when_named() -> None:
    assert _differences(EVALUATED, NESTED, (NESTED_LOG,)) == []
    assert _differences(EVALUATED, NESTED, ()) != []
    # per micro-batch: logged inside ``on_step_begin`` and ``on_substep_end`` (GA 2)
    original = ("on_step_begin@0", "on_log@0", "on_substep_end@0", "on_log@0", "on_pre_optimizer_step@0")
    moved = ("on_log@0", "on_step_begin@0", "on_log@0", "on_substep_end@0", "on_pre_optimizer_step@0")
    assert _differences(original, moved, (NESTED_LOG,)) == []


def test_a_nested_log_at_another_event_or_step_is_still_reported() -> None:
    named = (NESTED_LOG,)
    # the log moved to the checkpoint's event instead of the evaluation's
    at_save = (*STEP, "on_prediction_step@2", "on_log@2", "on_evaluate@2", "on_save@2", "on_log@2")
    assert _differences(EVALUATED, at_save, named) != []
    # one log more, or at the next step
    assert _differences(EVALUATED, (*NESTED[:-1], "on_log@2", "on_save@2"), named) != []
    later = (
        *STEP,
        "on_prediction_step@2",
        "on_log@2",
        "on_evaluate@2",
        "on_save@2",
        "on_log@3",
        "on_step_begin@3",
    )
    assert _differences((*EVALUATED, "on_step_begin@3"), later, named) != []
    assert named_differences(f"It {NESTED_LOG}.") == (NESTED_LOG,)
