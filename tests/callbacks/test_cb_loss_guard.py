"""LossGuardCallback: non-finite losses and spikes in real training; the running median survives resume."""

from __future__ import annotations

import json

import pytest
import torch
from cb_support import train_logs
from transformers import TrainerCallback

from trainwright.callbacks import LossGuardCallback


class CorruptAt(TrainerCallback):
    """At the end of optimizer step ``step``, damage the real model's output layer in place."""

    def __init__(self, step: int, how: str) -> None:
        self.step = step
        self.how = how

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step == self.step:
            with torch.no_grad():
                if self.how == "nan":
                    model.lm_head.weight.fill_(float("nan"))
                else:  # sharpen the logits: the cross-entropy jumps by an order of magnitude
                    model.lm_head.weight.mul_(400.0)


def test_non_finite_loss_stops_training_with_a_clear_line(make_trainer, tmp_path, caplog):
    guard = LossGuardCallback()
    trainer = make_trainer(callbacks=[CorruptAt(3, "nan"), guard], max_steps=10, logging_nan_inf_filter=False)
    with caplog.at_level("WARNING", logger="trainwright.callbacks.loss_guard"):
        trainer.train()
    assert trainer.state.global_step == 4
    assert guard.tripped_step == 4 and guard.tripped_reason == "loss is nan (not finite)"
    assert "LossGuardCallback tripped at step 4: loss is nan (not finite). Stopping training." in caplog.text
    assert train_logs(trainer)[-1]["loss_guard/tripped"] == 1


def test_non_finite_grad_norm_trips_even_with_the_nan_filter_on(make_trainer):
    guard = LossGuardCallback()
    trainer = make_trainer(
        callbacks=[CorruptAt(2, "nan"), guard], max_steps=10
    )  # logging_nan_inf_filter=True
    trainer.train()
    assert guard.tripped_step == 3 and guard.tripped_reason.startswith("grad_norm is nan")


def test_spike_saves_and_stops(make_trainer, tmp_path):
    out = tmp_path / "spike"
    guard = LossGuardCallback(spike_factor=3, min_history=3, action="save_and_stop")
    trainer = make_trainer(callbacks=[CorruptAt(5, "spike"), guard], output_dir=out, max_steps=10)
    trainer.train()
    losses = [e["loss"] for e in train_logs(trainer)]
    assert guard.tripped_step == 6 and "spike" in guard.tripped_reason
    assert losses[-1] > 3 * sorted(losses[:5])[2]
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-6"]


def test_history_survives_resume_and_the_median_continues(make_trainer, tmp_path):
    out = tmp_path / "resume"
    first = make_trainer(
        callbacks=[LossGuardCallback(spike_factor=3, min_history=3)],
        output_dir=out,
        max_steps=4,
        save_strategy="steps",
        save_steps=3,
    )
    first.train()
    losses_before = [e["loss"] for e in train_logs(first)][:3]
    saved = json.loads((out / "checkpoint-3" / "trainer_state.json").read_text())
    assert saved["stateful_callbacks"]["LossGuardCallback"]["attributes"]["history"] == losses_before

    fresh = LossGuardCallback(spike_factor=3, min_history=3)
    trainer = make_trainer(callbacks=[CorruptAt(4, "spike"), fresh], output_dir=out, max_steps=8)
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-3"))
    # the spike at step 5 is detected because the 3 losses from before the checkpoint were restored;
    # a fresh history would hold only step 4's loss (< min_history) and let it pass
    assert fresh.tripped_step == 5
    assert fresh.history[:3] == losses_before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"spike_factor": 1.0}, "spike_factor must be > 1"),
        ({"window": 0}, "window must be an integer >= 1"),
        ({"window": 4, "min_history": 5}, r"min_history must be an integer in \[1, window=4\]"),
        ({"action": "halt"}, "action must be 'stop' or 'save_and_stop', got 'halt'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LossGuardCallback(**kwargs)


def test_transformers_own_restore_path_also_works(make_trainer, tmp_path):
    """With restore_callback_states_from_checkpoint=True transformers re-creates the callback from its state."""
    out = tmp_path / "hf_restore"
    make_trainer(
        callbacks=[LossGuardCallback(spike_factor=4, window=2, min_history=1)],
        output_dir=out,
        max_steps=3,
        save_strategy="steps",
        save_steps=3,
    ).train()
    mine = LossGuardCallback(spike_factor=4, window=2, min_history=1)
    trainer = make_trainer(
        callbacks=[mine], output_dir=out, max_steps=4, restore_callback_states_from_checkpoint=True
    )
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-3"))
    (guard,) = [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, LossGuardCallback)]
    assert guard is not mine  # transformers replaced the instance ...
    assert (guard.spike_factor, guard.window, guard.min_history) == (4, 2, 1)  # ... with the same arguments
    assert len(guard.history) == 2  # window of 2: step 3's restored loss + step 4's


def test_adding_the_guard_when_resuming_a_run_that_had_none(make_trainer, tmp_path):
    """transformers 5.24 raises KeyError at the next save for a stateful callback the checkpoint lacks."""
    out = tmp_path / "late"
    make_trainer(output_dir=out, max_steps=2, save_strategy="steps", save_steps=2).train()
    guard = LossGuardCallback()
    trainer = make_trainer(
        callbacks=[guard], output_dir=out, max_steps=4, save_strategy="steps", save_steps=2
    )
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    saved = json.loads((out / "checkpoint-4" / "trainer_state.json").read_text())
    assert saved["stateful_callbacks"]["LossGuardCallback"]["attributes"]["history"] == guard.history
    assert len(guard.history) == 2
