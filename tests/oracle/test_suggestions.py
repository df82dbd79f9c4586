"""``fix --suggest`` judged by the oracle: it previews the move ``--unsafe-fixes`` writes, and every
preview it prints, applied as printed, trains as the override did; the three wrong suggestions of issue
32 are gone (withheld, or replaced by a move that is oracle-equal)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwright.testing.oracle import Record, compare
from trainwright.testing.suggested import PreviewError, Suggested, apply_diff, blocks, suggestion

PROGRAMS = Path(__file__).parent / "programs"


def _only(previews: list[Suggested]) -> Suggested:
    (one,) = previews
    return one


def test_no_suggestion_for_a_timer_around_prediction_step() -> None:
    """No move, no finding: by default nothing is printed; ``--preview`` shows the finding and why."""
    assert suggestion(PROGRAMS / "predict_timer.py") == ""
    text = suggestion(PROGRAMS / "predict_timer.py", preview=True)
    assert "no mechanical move: no event begins `prediction_step`" in text, text
    assert "on_prediction_step(" not in text and "@@" not in text, text


def test_evaluate_print_is_not_moved_to_every_step() -> None:
    """The print before ``evaluate`` went to an unguarded ``on_step_end`` (every step). The planner
    refuses that move, so there is no finding by default and ``--preview`` says why."""
    assert suggestion(PROGRAMS / "eval_print.py") == ""
    text = suggestion(PROGRAMS / "eval_print.py", preview=True)
    assert "no mechanical move:" in text and "control.should_evaluate" in text, text
    assert "@@" not in text, text


def test_registration_hands_the_callback_the_trainer(suggested_programs: dict[str, list[Suggested]]) -> None:
    """The old "register it" line passed ``tok=None``; the move registers the callback in the trainer's
    own ``__init__`` with the trainer itself, so ``trainer.tok`` is the value the override read."""
    moved = _only(suggested_programs["sample_tok"])
    assert "+        self.add_callback(SampleTrainerTrainingStepCallback(self))" in moved.text
    assert "+            print(trainer.tok.decode([5, 6]))" in moved.text
    assert "tok=None" not in moved.text


@pytest.mark.parametrize("name", ["sample_tok", "gated_timer", "progress_file", "step_timer"])
def test_every_printed_preview_is_oracle_equal(
    name: str, oracle_records: dict[str, Record], suggested_programs: dict[str, list[Suggested]]
) -> None:
    """Applied as printed, the preview trains as the original at GA 1 and 2, with evaluation,
    checkpoints, resume and the final save: losses, files, log history, printed lines, timer spans.
    ``sample_tok``'s callback no longer raises ``AttributeError``; the gated timer measures each
    micro-batch at the same step number (it measured the whole optimiser step, one step later)."""
    original = oracle_records[name]
    assert not original.failed, original
    previews = suggested_programs[name]
    assert [m for m in previews if m.program is not None], previews
    for i, moved in enumerate(previews):
        if moved.program is not None:
            assert compare(original, oracle_records[f"{name}_suggested{i}"]) == [], moved.text


def test_a_diff_that_does_not_match_the_file_is_refused() -> None:
    diff = "--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
    assert apply_diff("a = 1\nb = 2\nc = 3\n", diff) == "a = 1\nb = 3\nc = 3\n"
    with pytest.raises(PreviewError):
        apply_diff("a = 1\nb = 5\n", diff)


def test_blocks_split_the_output_per_finding() -> None:
    text = "x.py:3:9: TW201 a\n  help: h\n--- a/x.py\n+++ b/x.py\n\nx.py:9:9: TW202 b\n  no mechanical move: r\n\n"
    assert [b.split("\n", 1)[0] for b in blocks(text)] == ["x.py:3:9: TW201 a", "x.py:9:9: TW202 b"]
