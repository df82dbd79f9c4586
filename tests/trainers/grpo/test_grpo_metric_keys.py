"""Metric parity with TRL: for the same configuration, the keys TRL logs during training and returns
from ``evaluate()`` are the keys we log and return (plus ``frac_reward_unscorable``, our own)."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, save_tiny_model

trl = pytest.importorskip("trl")

#: metrics trainwright logs that TRL does not (documented in docs/trainers.md)
OURS_ONLY = {"frac_reward_unscorable"}


def length_reward(completions, **kwargs):
    return [float(len(c)) for c in completions]


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory):
    """A saved tiny model: TRL builds its reference (beta > 0) by loading the policy's folder again."""
    return str(save_tiny_model(tmp_path_factory.mktemp("tiny"), hidden_size=16, num_layers=1, num_heads=2))


def _keys(config_class, trainer_class, model, tmp_path, **overrides):
    dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(8)]})
    settings = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 4,
        "per_device_eval_batch_size": 4,
        "num_generations": 4,
        "max_completion_length": 4,
        "max_steps": 2,
        "logging_steps": 1,
        "report_to": [],
        "use_cpu": True,
        "save_strategy": "no",
        "learning_rate": 1e-3,
    }
    args = config_class(**settings, **overrides)
    trainer = trainer_class(
        model=model,
        reward_funcs=[length_reward],
        args=args,
        train_dataset=dataset,
        eval_dataset=dataset,
    )
    torch.manual_seed(0)
    trainer.train()
    train = set().union(*(set(log) for log in trainer.state.log_history if "loss" in log))
    return train, set(trainer.evaluate())


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"beta": 0.1, "loss_type": "cispo", "entropy_coef": 0.1, "gradient_accumulation_steps": 2},
        {"loss_type": "vespo", "use_adaptive_entropy": True, "top_entropy_quantile": 0.5},
    ],
    ids=["defaults", "cispo-kl-entropy-bonus", "vespo-adaptive-entropy"],
)
def test_training_and_evaluate_metric_keys_equal_trl(tmp_path, model_folder, overrides):
    trl_train, trl_eval = _keys(
        trl.GRPOConfig,
        trl.GRPOTrainer,
        model_folder,
        tmp_path / "trl",
        bf16=False,
        gradient_checkpointing=False,
        **overrides,
    )
    train, evaluation = _keys(GRPOConfig, GRPOTrainer, model_folder, tmp_path / "ours", **overrides)
    assert "rewards/length_reward/std" in trl_train and "eval_rewards/length_reward/mean" in trl_eval
    assert train == trl_train | OURS_ONLY
    assert evaluation == trl_eval | {f"eval_{name}" for name in OURS_ONLY}


def test_metric_for_best_model_can_be_a_reward(tmp_path, tokenizer, prompts_dataset):
    """A TRL script's ``metric_for_best_model="eval_rewards/<f>/mean"`` with ``load_best_model_at_end``."""
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=0)
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        per_device_eval_batch_size=2,
        num_generations=4,
        max_completion_length=3,
        max_steps=4,
        eval_strategy="steps",
        eval_steps=2,
        save_steps=2,
        load_best_model_at_end=True,
        metric_for_best_model="eval_rewards/length_reward/mean",
        report_to=[],
        use_cpu=True,
    )
    trainer = GRPOTrainer(
        model,
        length_reward,
        args=args,
        train_dataset=prompts_dataset,
        eval_dataset=prompts_dataset.select(range(4)),
        processing_class=tokenizer,
    )
    trainer.train()
    scores = [
        log["eval_rewards/length_reward/mean"] for log in trainer.state.log_history if "eval_loss" in log
    ]
    assert len(scores) == 2
    assert trainer.state.best_metric == pytest.approx(max(scores))
    assert trainer.state.best_model_checkpoint.endswith(f"checkpoint-{2 * (1 + scores.index(max(scores)))}")
