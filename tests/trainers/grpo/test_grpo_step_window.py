"""A shuffled round is cut into micro-batches that hold whole prompt groups inside each optimiser step (the
shared-prompt forward then runs fewer prompts), and training is the same as with the plain shuffle: which
rows share a step is unchanged, and the step's gradient does not depend on how its rows are cut."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer
from trainwright.trainers.grpo.generation_rounds import GenerationRounds
from trainwright.trainers.grpo.round_data import shuffle_rows

torch.set_num_threads(1)


def _round(groups: int, size: int) -> dict[str, torch.Tensor]:
    prompt_ids = torch.arange(groups).repeat_interleave(size).unsqueeze(1).repeat(1, 3)
    return {"prompt_ids": prompt_ids, "completion_ids": torch.arange(groups * size).unsqueeze(1)}


@pytest.mark.parametrize("seed", range(20))
def test_window_keeps_the_steps_rows_and_groups_them(seed):
    batch = _round(groups=6, size=4)
    plain, windowed = shuffle_rows(batch, seed), shuffle_rows(batch, seed, window=8)
    for start in range(0, 24, 8):
        rows = slice(start, start + 8)
        assert sorted(plain["completion_ids"][rows].tolist()) == sorted(
            windowed["completion_ids"][rows].tolist()
        )
        prompts = windowed["prompt_ids"][rows, 0].tolist()
        runs = [p for i, p in enumerate(prompts) if i == 0 or p != prompts[i - 1]]
        assert len(runs) == len(set(prompts)), prompts  # each prompt's rows side by side


class _Recording(GRPOTrainer):
    """Records the distinct prompts of every micro-batch the loss sees (a public hook)."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[no-untyped-def]
        self.__dict__.setdefault("prompts", []).append(len(torch.unique(inputs["prompt_ids"], dim=0)))
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


def _train(tmp_path, windowed: bool, monkeypatch, **overrides: Any):  # type: ignore[no-untyped-def]
    if not windowed:
        monkeypatch.setattr(GenerationRounds, "order_free_window", lambda self: None)
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=5)
    settings = {
        "per_device_train_batch_size": 8, "num_generations": 4, "gradient_accumulation_steps": 2,
        "steps_per_generation": 4, "max_steps": 4, "max_completion_length": 4, "report_to": [],
        "use_cpu": True, "save_strategy": "no", "logging_steps": 1, "disable_tqdm": True, "seed": 5,
        "learning_rate": 1e-2, "loss_type": "dapo",
    }  # fmt: skip
    args = GRPOConfig(output_dir=str(tmp_path), **{**settings, **overrides})
    dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(64)]})
    trainer = _Recording(
        model,
        lambda completions, **kw: [float(len(c)) for c in completions],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    monkeypatch.undo()
    return trainer


@pytest.mark.parametrize("loss_type", ["dapo", "grpo", "dr_grpo"])
def test_training_is_unchanged_by_the_window(tmp_path, monkeypatch, loss_type):
    windowed = _train(tmp_path / "w", True, monkeypatch, loss_type=loss_type)
    plain = _train(tmp_path / "p", False, monkeypatch, loss_type=loss_type)
    assert windowed.rounds.order_free_window() == 16
    assert len(windowed.prompts) == len(plain.prompts) == 8
    assert sum(windowed.prompts) < sum(plain.prompts)  # fewer prompts to run: the point of the window
    # The window regroups the same completions into other micro-batches, so float32 sums run in another
    # order: the final parameters differ by rounding only (at most 2.5e-6 on lm_head, weights ~0.085, on
    # the 2-core CI machine of 2026-12-07; 1e-6 held on an earlier one), far below one step's update
    # (lr 0.01). A real change in the gradient moves them by 1e-3 or more.
    for (name, a), b in zip(windowed.model.named_parameters(), plain.model.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5, msg=name)
    losses = [[log["loss"] for log in t.state.log_history if "loss" in log] for t in (windowed, plain)]
    assert len(losses[0]) == 4
    assert losses[0] == pytest.approx(losses[1], abs=1e-6)


@pytest.mark.parametrize(
    "overrides",
    [{"loss_type": "bnpo"}, {"top_entropy_quantile": 0.5}, {"gradient_accumulation_steps": 1},
     {"gradient_accumulation_steps": 3, "steps_per_generation": 4}],
)  # fmt: skip
def test_no_window_where_the_cut_changes_the_gradient(overrides, tmp_path):
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    settings = {"per_device_train_batch_size": 8, "num_generations": 4, "gradient_accumulation_steps": 2,
                "steps_per_generation": 4, "report_to": [], "use_cpu": True}  # fmt: skip
    args = GRPOConfig(output_dir=str(tmp_path), **{**settings, **overrides})
    dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(64)]})
    trainer = GRPOTrainer(model, lambda completions, **kw: [0.0] * len(completions), args=args,
                          train_dataset=dataset, processing_class=tokenizer)  # fmt: skip
    assert trainer.rounds.order_free_window() is None
