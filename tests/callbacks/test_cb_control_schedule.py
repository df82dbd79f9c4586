"""ControlScheduleCallback: evaluate / save / log at custom schedules in a real Trainer run."""

from __future__ import annotations

import pytest
from cb_support import train_logs
from transformers import TrainerState

from trainwright.callbacks import ControlScheduleCallback, Schedule


def test_schedules_fire_at_the_right_optimizer_steps_with_grad_accumulation(make_trainer, tmp_path):
    out = tmp_path / "sched"
    callback = ControlScheduleCallback(
        evaluate=[2, 5],
        save=Schedule.every(3),
        log=Schedule.log_spaced(4, last=8),  # 1, 2, 4, 8
    )
    trainer = make_trainer(
        callbacks=[callback],
        output_dir=out,
        with_eval=True,
        max_steps=8,
        logging_strategy="no",
        eval_strategy="no",
        save_strategy="no",
    )
    trainer.train()
    assert [e["step"] for e in train_logs(trainer)] == [1, 2, 4, 8]
    assert [e["step"] for e in trainer.state.log_history if "eval_loss" in e] == [2, 5]
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-3", "checkpoint-6"]


def test_schedule_continues_after_resume(make_trainer, tmp_path):
    out = tmp_path / "resume"
    make_trainer(
        callbacks=[ControlScheduleCallback(save=[2], log=[3, 5])],
        output_dir=out,
        max_steps=3,
        logging_strategy="no",
    ).train()
    assert (out / "checkpoint-2").is_dir()
    trainer = make_trainer(
        callbacks=[ControlScheduleCallback(save=[2], log=[3, 5])],
        output_dir=out,
        max_steps=6,
        logging_strategy="no",
    )
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    # after resuming at step 2 the schedule picks up at step 3 (not at its start)
    assert [e["step"] for e in train_logs(trainer)] == [3, 5]


def test_predicate_schedule_sees_the_state(make_trainer):
    seen: list[int] = []

    def after_epoch_half(state: TrainerState) -> bool:
        seen.append(state.global_step)
        return state.epoch is not None and state.epoch >= 0.5 and state.global_step % 2 == 1

    trainer = make_trainer(
        callbacks=[ControlScheduleCallback(log=after_epoch_half)], max_steps=6, logging_strategy="no"
    )
    trainer.train()
    assert seen == [1, 2, 3, 4, 5, 6]
    # 4 optimizer steps per epoch (32 samples / (4 × GA 2)): epoch >= 0.5 from step 2
    assert [e["step"] for e in train_logs(trainer)] == [3, 5]


def test_schedule_helpers_and_errors():
    assert Schedule.log_spaced(5, last=100).steps_until(100) == [1, 3, 10, 32, 100]
    assert Schedule.every(3, start=1).steps_until(10) == [4, 7, 10]
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        Schedule.every(0)
    with pytest.raises(ValueError, match=r"steps must be integers >= 1, got \[-1\]"):
        Schedule.at([3, -1])
    with pytest.raises(ValueError, match="at least one of evaluate=, save=, log="):
        ControlScheduleCallback()
    with pytest.raises(TypeError, match="a bool is not a schedule"):
        ControlScheduleCallback(save=True)
    with pytest.raises(TypeError, match="got str"):
        ControlScheduleCallback(log="often")
