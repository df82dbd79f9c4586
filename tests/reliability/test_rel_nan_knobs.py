"""Numeric knobs checked where they are used: a NaN set after the config was built never trains into NaN.

The audit: a DPO ``beta`` set to NaN after ``DPOConfig()`` was built, or given as a 0-d tensor, passed;
``train()`` returned, the loss logged 0.0 and every parameter was NaN. A config is a mutable object (a
``ParameterScheduleCallback`` anneals ``beta`` every step), so the losses read their knobs through a check.
A 0-d tensor is accepted as its number, as TRL accepts one (``trl.DPOConfig(beta=torch.tensor(0.1))``
trains); NaN is refused by name (TRL trains into NaN). A learning rate given as the string ``"nan"`` ended in
an anonymous scheduler ``TypeError``.
"""

from __future__ import annotations

import math

import pytest
import torch
from rel_trainers import grpo_trainer

pytest.importorskip("datasets")

from datasets import Dataset

from trainwright import DPOConfig, DPOTrainer, GRPOConfig
from trainwright.callbacks import ParameterScheduleCallback
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

TOKENIZER = build_tokenizer()
PAIRS = Dataset.from_list([{"prompt": f"Q{i}?", "chosen": " yes", "rejected": " no"} for i in range(8)])


def dpo_config(tmp_path, **overrides) -> DPOConfig:
    settings = {
        "output_dir": str(tmp_path / "dpo"), "per_device_train_batch_size": 4, "max_steps": 2, "report_to": "none",
        "save_strategy": "no", "use_cpu": True, "disable_tqdm": True, "logging_steps": 1, "learning_rate": 1e-2, "seed": 0,
    }  # fmt: skip
    settings.update(overrides)
    return DPOConfig(**settings)


def dpo_trainer(args: DPOConfig, callbacks=None) -> DPOTrainer:
    model = build_tiny_causal_lm(TOKENIZER, hidden_size=16, num_layers=1, num_heads=2, seed=0)
    return DPOTrainer(model, args=args, train_dataset=PAIRS, processing_class=TOKENIZER, callbacks=callbacks)


def params(trainer) -> list[torch.Tensor]:
    return [p.detach().clone() for p in trainer.model.parameters()]


@pytest.mark.parametrize("when", ["after the config", "after the trainer"])
def test_dpo_beta_set_to_nan_after_construction_is_refused_before_any_update(tmp_path, when):
    args = dpo_config(tmp_path)
    if when == "after the config":
        args.beta = float("nan")
    trainer = dpo_trainer(args)
    if when == "after the trainer":
        trainer.args.beta = float("nan")
    before = params(trainer)
    with pytest.raises(ValueError, match=r"DPOConfig\.beta is nan where the loss reads it"):
        trainer.train()
    assert trainer.state.global_step == 0
    assert all(torch.equal(a, b) for a, b in zip(before, params(trainer)))  # no NaN, nothing lost


def test_dpo_beta_as_a_0d_tensor_trains_exactly_as_its_float(tmp_path):
    import trl

    trl_args = trl.DPOConfig(output_dir=str(tmp_path), beta=torch.tensor(0.25), bf16=False, use_cpu=True)
    assert torch.is_tensor(trl_args.beta)  # TRL accepts it (and trains with it); so do we, as its float
    as_tensor = dpo_config(tmp_path, beta=torch.tensor(0.25))
    assert type(as_tensor.beta) is float and as_tensor.beta == 0.25
    results = []
    for args in (as_tensor, dpo_config(tmp_path, beta=0.25)):
        trainer = dpo_trainer(args)
        trainer.train()
        results.append(params(trainer))
    assert all(torch.equal(a, b) for a, b in zip(*results))
    assert all(torch.isfinite(p).all() for p in results[0])


def test_dpo_tensor_nan_beta_is_refused_at_construction(tmp_path):
    with pytest.raises(ValueError, match=r"beta=tensor\(nan\) is not a finite number"):
        dpo_config(tmp_path, beta=torch.tensor(float("nan")))


def test_dpo_beta_scheduled_into_nan_stops_at_that_step(tmp_path):
    """The knob is read at every step: a schedule is followed, and the step where it yields NaN is refused."""
    trainer = dpo_trainer(dpo_config(tmp_path, max_steps=3))
    schedule = ParameterScheduleCallback(
        trainer.args, "beta", schedule=lambda step, max_steps: 0.1 if step < 2 else math.nan
    )
    trainer.add_callback(schedule)
    with pytest.raises(ValueError, match=r"DPOConfig\.beta is nan where the loss reads it"):
        trainer.train()
    assert trainer.state.global_step == 2
    assert all(torch.isfinite(p).all() for p in trainer.model.parameters())


@pytest.mark.parametrize("knob", ["beta", "epsilon", "epsilon_high", "temperature"])
def test_grpo_knob_set_to_nan_after_construction_is_refused(tmp_path, knob):
    trainer = grpo_trainer(tmp_path / "grpo", save_steps=100, beta=0.04)
    setattr(trainer.args, knob, float("nan"))
    before = params(trainer)
    with pytest.raises(ValueError, match=rf"GRPOConfig\.{knob} is nan where the loss reads it"):
        trainer.train()
    assert all(torch.equal(a, b) for a, b in zip(before, params(trainer)))


def test_grpo_knobs_as_0d_tensors_are_their_floats(tmp_path):
    args = GRPOConfig(
        output_dir=str(tmp_path), per_device_train_batch_size=2, num_generations=2, report_to=[],
        use_cpu=True, beta=torch.tensor(0.04), epsilon=torch.tensor(0.2), temperature=torch.tensor(0.9),
    )  # fmt: skip
    assert (type(args.beta), type(args.epsilon), type(args.temperature)) == (float, float, float)
    assert args.beta == pytest.approx(0.04) and args.epsilon == args.epsilon_high == pytest.approx(0.2)


@pytest.mark.parametrize("config", [DPOConfig, GRPOConfig])
@pytest.mark.parametrize("value", ["nan", "1e-4"])
def test_a_learning_rate_string_is_refused_by_name(tmp_path, config, value):
    with pytest.raises(ValueError, match=rf"learning_rate='{value}' is a str, not a number"):
        config(output_dir=str(tmp_path), learning_rate=value, report_to=[], use_cpu=True)
