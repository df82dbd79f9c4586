"""The record fixtures discriminate: a record kept at the wrong moment is reported. The fixture
``moves/record_after_evaluate.py`` (best evaluation loss, logged by every later ``log``) is compared with
a hand-written wrong move that updates the record one step late, at ``on_step_begin`` from
``log_history``; the oracle must report the lag in ``log_history``, as it must report nothing for the
move ``trainwright fix`` writes (``test_moves.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from trainwright.testing.compare import compare
from trainwright.testing.fixed import judged_spec
from trainwright.testing.oracle import run_specs

FIXTURE = Path(__file__).parent / "moves" / "record_after_evaluate.py"

LATE = """
import math

from transformers import Trainer, TrainerCallback


class LateRecord(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_step_begin(self, args, state, control, **kwargs):
        evals = [h["eval_loss"] for h in state.log_history if "eval_loss" in h]
        if evals:
            self.trainer.best_eval_loss = min(self.trainer.best_eval_loss, round(evals[-1], 4))


class BestEvalTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.best_eval_loss = math.inf
        self.add_callback(LateRecord(self))

    def log(self, logs, start_time=None):
        logs["best_eval_loss"] = self.best_eval_loss
        super().log(logs, start_time)
"""


@pytest.mark.slow
def test_a_record_kept_one_step_late_is_reported(tmp_path: Path) -> None:
    late = tmp_path / "late_record.py"
    late.write_text(LATE, encoding="utf-8")
    original, moved = run_specs([judged_spec(FIXTURE), judged_spec(late)])
    differences = compare(original, moved)
    assert any("best_eval_loss" in str(d) for d in differences), differences
