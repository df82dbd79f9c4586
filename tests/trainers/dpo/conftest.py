"""Shared fixtures for the DPO tests: one tokenizer per session, fresh tiny models, small preference sets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from datasets import Dataset

from trainwright.toy import build_tiny_causal_lm


@pytest.fixture
def make_model(tokenizer) -> Callable[..., Any]:
    def make(seed: int = 0, **kwargs: Any):
        return build_tiny_causal_lm(tokenizer, seed=seed, **kwargs)

    return make


def text_pairs(n: int = 8, offset: int = 0) -> Dataset:
    """Plain-text pairs: the preferred answer is always 'yes', the other 'no' (prompts differ)."""
    rows = [
        {
            "prompt": f"Question {i + offset}: is {chr(97 + (i + offset) % 26)} good?",
            "chosen": " yes",
            "rejected": " no",
        }
        for i in range(n)
    ]
    return Dataset.from_list(rows)


def make_config(tmp_path: Path, **overrides: Any):
    """A CPU-friendly DPOConfig: no saving, no reporting, float32, logging every step."""
    from trainwright import DPOConfig

    defaults: dict[str, Any] = {
        "output_dir": str(tmp_path / "out"),
        "per_device_train_batch_size": 4,
        "per_device_eval_batch_size": 4,
        "max_steps": 2,
        "logging_steps": 1,
        "learning_rate": 1e-2,
        "report_to": "none",
        "save_strategy": "no",
        "use_cpu": True,
        "disable_tqdm": True,
        "seed": 0,
    }
    defaults.update(overrides)
    return DPOConfig(**defaults)


def trl_dpo_trainer(policy, reference, dataset, tokenizer, output_dir: Path | str, **config: Any):
    """TRL's DPOTrainer on copies of ``policy`` and ``reference``, CPU and float32 like ``make_config``:
    the independent side of the parity tests."""
    import copy

    import trl

    args = trl.DPOConfig(
        output_dir=str(output_dir),
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        use_cpu=True,
        **config,
    )
    return trl.DPOTrainer(
        model=copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
