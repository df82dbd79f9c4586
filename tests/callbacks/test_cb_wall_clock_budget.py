"""WallClockBudgetCallback: saves and stops before the budget runs out; the budget survives resume."""

from __future__ import annotations

import json

import pytest
from cb_support import AdvanceClock, FakeClock

from trainwright.callbacks import WallClockBudgetCallback


def test_budget_saves_and_stops_before_running_out(make_trainer, tmp_path, caplog):
    clock = FakeClock()
    budget = WallClockBudgetCallback(budget_seconds=55, clock=clock)
    out = tmp_path / "budget"
    trainer = make_trainer(callbacks=[AdvanceClock(clock, 10), budget], output_dir=out, max_steps=20)
    with caplog.at_level("WARNING", logger="trainwright.callbacks.wall_clock_budget"):
        trainer.train()
    # each step takes 10 s: after step 5 (50 s used) a 6th step would end at 60 s > 55 s
    assert trainer.state.global_step == 5
    assert budget.stopped_at_step == 5
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-5"]
    assert (out / "checkpoint-5" / "optimizer.pt").is_file()  # a full, resumable checkpoint
    assert "50.0s of the 55.0s budget used at step 5" in caplog.text


def test_total_budget_continues_after_resume(make_trainer, tmp_path):
    out = tmp_path / "total"
    clock = FakeClock()
    first = WallClockBudgetCallback(budget_seconds=1000, scope="total", clock=clock)
    make_trainer(
        callbacks=[AdvanceClock(clock, 10), first],
        output_dir=out,
        max_steps=3,
        save_strategy="steps",
        save_steps=2,
    ).train()
    saved = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert saved["stateful_callbacks"]["WallClockBudgetCallback"]["attributes"]["elapsed_before"] == 20.0

    clock2 = FakeClock()
    fresh = WallClockBudgetCallback(budget_seconds=55, scope="total", clock=clock2)
    trainer = make_trainer(callbacks=[AdvanceClock(clock2, 10), fresh], output_dir=out, max_steps=20)
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    # 20 s were used before checkpoint-2: steps 3, 4, 5 bring it to 50 s, and step 6 would overrun.
    # (Without the restored 20 s it would stop at step 7.)
    assert fresh.stopped_at_step == 5
    assert trainer.state.global_step == 5
    assert (out / "checkpoint-5").is_dir()


def test_session_scope_ignores_time_before_resume(make_trainer, tmp_path):
    out = tmp_path / "session"
    clock = FakeClock()
    make_trainer(
        callbacks=[AdvanceClock(clock, 10), WallClockBudgetCallback(1000, clock=clock)],
        output_dir=out,
        max_steps=2,
        save_strategy="steps",
        save_steps=2,
    ).train()
    clock2 = FakeClock()
    fresh = WallClockBudgetCallback(budget_seconds=35, safety_margin_seconds=5, clock=clock2)
    trainer = make_trainer(callbacks=[AdvanceClock(clock2, 10), fresh], output_dir=out, max_steps=20)
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    # this session: after step 4 (20 s), one more step + 5 s margin ends at 35 s — still fits; after step 5 not
    assert fresh.stopped_at_step == 5 and trainer.state.global_step == 5


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget_seconds": -1}, "budget_seconds must be a finite number > 0, got -1"),
        (
            {"budget_seconds": 10, "safety_margin_seconds": 10},
            "safety_margin_seconds must be >= 0 and < budget",
        ),
        ({"budget_seconds": 10, "scope": "job"}, "scope must be 'session' or 'total', got 'job'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WallClockBudgetCallback(**kwargs)
