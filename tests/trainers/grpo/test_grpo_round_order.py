"""Issue 37, item 3: a round is shuffled before it is cut into micro-batches, and sampled in train mode, as
TRL's GRPOTrainer does; counted against TRL itself on the same toy setup."""

from __future__ import annotations

import statistics
from typing import Any

import pytest
import torch
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

trl = pytest.importorskip("trl")
torch.set_num_threads(1)

STEPS = 32
SETTINGS: dict[str, Any] = {
    "per_device_train_batch_size": 4, "num_generations": 4, "steps_per_generation": 4,
    "gradient_accumulation_steps": 1, "max_steps": STEPS, "max_completion_length": 2, "report_to": [],
    "use_cpu": True, "save_strategy": "no", "logging_steps": 1000, "disable_tqdm": True, "seed": 3,
    "learning_rate": 1e-3,
}  # fmt: skip
# 4 groups of 4 completions per round, 4 rows a step: E[distinct prompts] = 4·(1 − C(12,4)/C(16,4)) ≈ 2.91
EXPECTED_MEAN = 4 * (1 - 495 / 1820)


def reward(completions, **kwargs):  # type: ignore[no-untyped-def]
    return [float(len(c)) for c in completions]


def _recording(base: type) -> type:
    """``base`` whose ``compute_loss`` (a public hook both trainers call once per micro-step) records how
    many distinct prompts the micro-batch holds, and whose sampling records the model's mode."""

    class Recording(base):  # type: ignore[misc, valid-type]
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[no-untyped-def]
            self.prompts_per_step.append(len(torch.unique(inputs["prompt_ids"], dim=0)))
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    return Recording


def _train(base: type, config_class: type, tmp_path, **overrides: Any) -> Any:
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=3)
    modes: list[bool] = []
    model.register_forward_pre_hook(
        lambda module, args: modes.append(module.training) if torch.is_grad_enabled() is False else None
    )
    extra = {"bf16": False, "gradient_checkpointing": False} if config_class is trl.GRPOConfig else {}
    args = config_class(output_dir=str(tmp_path), **{**SETTINGS, **extra, **overrides})
    dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(64)]})
    trainer = _recording(base)(model, reward, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.prompts_per_step = []
    trainer.train()
    trainer.sampling_modes = modes
    return trainer


@pytest.fixture(scope="module")
def trl_counts(tmp_path_factory):
    return _train(trl.GRPOTrainer, trl.GRPOConfig, tmp_path_factory.mktemp("trl")).prompts_per_step


def test_prompts_per_optimiser_step_match_trls_distribution(tmp_path, trl_counts):
    ours = _train(GRPOTrainer, GRPOConfig, tmp_path).prompts_per_step
    assert len(ours) == len(trl_counts) == STEPS
    for counts in (ours, trl_counts):
        assert set(counts) <= {1, 2, 3, 4} and len(set(counts)) > 1
        assert abs(statistics.mean(counts) - EXPECTED_MEAN) < 0.5, counts  # whole groups would give 1.0
    assert abs(statistics.mean(ours) - statistics.mean(trl_counts)) < 0.6


def test_whole_groups_on_request(tmp_path):
    ours = _train(GRPOTrainer, GRPOConfig, tmp_path, shuffle_round_rows=False, max_steps=8).prompts_per_step
    assert ours == [1] * 8


def test_sampling_runs_in_train_mode_as_trl(tmp_path_factory):
    trl_modes = _train(
        trl.GRPOTrainer, trl.GRPOConfig, tmp_path_factory.mktemp("t"), max_steps=4
    ).sampling_modes
    our_modes = _train(GRPOTrainer, GRPOConfig, tmp_path_factory.mktemp("o"), max_steps=4).sampling_modes
    assert trl_modes and set(trl_modes) == {True}  # TRL samples with dropout on
    assert our_modes and set(our_modes) == {True}
