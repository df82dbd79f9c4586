"""ParameterScheduleCallback: a loss coefficient annealed per optimizer step in a real Trainer run."""

from __future__ import annotations

import pytest
import torch.nn.functional as F
from cb_support import train_logs

from trainwright.callbacks import ParameterScheduleCallback


class ScaledLoss:
    """A real ``compute_loss_func``: causal-LM cross-entropy × ``beta``; records the beta of every micro-batch."""

    def __init__(self) -> None:
        self.beta = 1.0
        self.seen: list[float] = []

    def __call__(self, outputs, labels, num_items_in_batch=None):
        self.seen.append(self.beta)
        logits = outputs.logits[:, :-1].flatten(0, 1)
        loss = F.cross_entropy(logits, labels[:, 1:].flatten(), ignore_index=-100, reduction="sum")
        return self.beta * loss / (num_items_in_batch if num_items_in_batch is not None else 1)


def test_linear_anneal_reaches_every_micro_batch(make_trainer):
    loss_fn = ScaledLoss()
    schedule = ParameterScheduleCallback(loss_fn, "beta", start=1.0, end=0.0, schedule="linear")
    trainer = make_trainer(callbacks=[schedule], compute_loss_func=loss_fn, max_steps=4)
    trainer.train()
    # GA=2: two micro-batches per optimizer step share the step's value
    assert loss_fn.seen == [1.0, 1.0, 0.75, 0.75, 0.5, 0.5, 0.25, 0.25]
    assert [e["schedule/beta"] for e in train_logs(trainer)] == [1.0, 0.75, 0.5, 0.25]
    assert train_logs(trainer)[-1]["loss"] < train_logs(trainer)[0]["loss"] / 2  # the loss really was scaled


def test_cosine_on_the_model_config_and_a_custom_schedule(make_trainer):
    cosine = ParameterScheduleCallback(
        "model", "generation_config.temperature", 1.0, 0.5, "cosine", end_step=2
    )
    custom = ParameterScheduleCallback(
        "model", "config.custom_coef", schedule=lambda step, total: step / total, log_key="coef"
    )
    trainer = make_trainer(callbacks=[cosine, custom], max_steps=4)
    trainer.model.config.custom_coef = -1.0
    trainer.train()
    assert [e["schedule/generation_config.temperature"] for e in train_logs(trainer)] == pytest.approx(
        [1.0, 0.75, 0.5, 0.5]
    )
    assert [e["coef"] for e in train_logs(trainer)] == [0.0, 0.25, 0.5, 0.75]
    assert trainer.model.generation_config.temperature == 0.5


def test_resume_continues_the_schedule(make_trainer, tmp_path):
    out = tmp_path / "resume"
    first_loss = ScaledLoss()
    make_trainer(
        callbacks=[ParameterScheduleCallback(first_loss, "beta")],
        compute_loss_func=first_loss,
        output_dir=out,
        max_steps=4,
        save_strategy="steps",
        save_steps=2,
    ).train()
    loss_fn = ScaledLoss()
    trainer = make_trainer(
        callbacks=[ParameterScheduleCallback(loss_fn, "beta")],
        compute_loss_func=loss_fn,
        output_dir=out,
        max_steps=4,
    )
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    assert loss_fn.seen == [0.5, 0.5, 0.25, 0.25]


def test_errors_name_the_problem(make_trainer):
    with pytest.raises(
        ValueError, match="unknown schedule 'cosin'; known: constant, linear, cosine, exponential"
    ):
        ParameterScheduleCallback(object(), "beta", schedule="cosin")
    with pytest.raises(ValueError, match="exponential schedule needs non-zero start and end"):
        ParameterScheduleCallback(object(), "beta", 1.0, 0.0, "exponential")
    with pytest.raises(ValueError, match="end_step must be an integer > start_step"):
        ParameterScheduleCallback(object(), "beta", start_step=5, end_step=5)
    trainer = make_trainer(callbacks=[ParameterScheduleCallback(ScaledLoss(), "betta")], max_steps=1)
    with pytest.raises(AttributeError, match="ScaledLoss has no attribute 'betta'"):
        trainer.train()


def test_exponential_values():
    cb = ParameterScheduleCallback(object(), "t", start=1.0, end=0.01, schedule="exponential")
    assert [cb.value_at(s, 2) for s in (0, 1, 2, 5)] == pytest.approx([1.0, 0.1, 0.01, 0.01])
