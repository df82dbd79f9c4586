"""``scripts/move_oracle.py`` and ``scripts/oracle_matrix.py`` give one verdict for one move (issue 33).

They used to disagree on the gallery's step timer: the matrix fixed it for the gallery's range
(``>=4.44,<6``), where the move's ``on_pre_optimizer_step`` does not exist on 4.44 and TW401's fix then
renamed it to ``on_optimizer_step`` (the timer's last micro-batch measured the optimiser step too:
0.4 s for 0.1 s), while ``move_oracle`` fixed it for ``==5.24.0``; and the oracle dropped every
``*_time`` key of ``log_history``, so only the event order showed. Both now fix for the same range,
train the same spec, compare the user's timer, and the move keeps the span on every judged release.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing import _digest
from trainwright.testing.fixed import DEFAULT_RANGE

ROOT = Path(__file__).resolve().parents[2]
STEP_TIMER = ROOT / "examples" / "gallery" / "step_timer_before.py"
sys.path.insert(0, str(ROOT / "scripts"))

import move_oracle
import oracle_matrix


def test_a_users_timer_is_compared_and_the_trainers_runtime_is_not() -> None:
    logged = _digest.plain({"step_time": 0.1, "train_runtime": 2.5, "eval_samples_per_second": 3.0})
    assert logged == {"step_time": 0.1}


@pytest.mark.slow
def test_both_scripts_find_the_step_timer_move_equal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [c for c in oracle_matrix._fix("step_timer", STEP_TIMER, tmp_path, DEFAULT_RANGE) if c.unsafe]
    assert len(cases) == 1
    moved = cases[0].fixed.read_text()
    assert "def on_pre_optimizer_step" in moved and "# noqa: TW401" in moved  # not renamed by TW401's fix
    oracle_matrix.run(cases, {oracle_matrix.PINNED: None})
    assert cases[0].verdicts == {oracle_matrix.PINNED: "equal"}, cases[0].differences
    assert move_oracle.main([str(STEP_TIMER)]) == 0
    assert "1 of 1 moves oracle-equal" in capsys.readouterr().out
