"""Shared fixtures for the reference-callback tests: a tiny real ``Trainer`` on a 1-layer Qwen2.

Everything is real (model built from a config, byte-level BPE tokenizer, ``DataCollatorForLanguageModeling``);
the only knobs are the training arguments. 32 texts of different lengths, so batches contain padding.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="the callbacks' tests need the train extra")
pytest.importorskip("transformers", reason="the callbacks' tests need the train extra")

from cb_support import tiny_model
from transformers import DataCollatorForLanguageModeling, Trainer, TrainerCallback, TrainingArguments

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "while",
    "helpful",
    "assistants",
    "answer",
    "short",
    "questions",
]


def _texts(n: int = 32) -> list[str]:
    # deterministic, varied lengths (3..14 words)
    return [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(3 + (i * 5) % 12)) for i in range(n)]


@pytest.fixture(scope="session")
def train_dataset(tokenizer) -> list[dict[str, list[int]]]:
    return [{"input_ids": tokenizer(text)["input_ids"]} for text in _texts()]


@pytest.fixture(scope="session")
def eval_dataset(tokenizer) -> list[dict[str, list[int]]]:
    return [{"input_ids": tokenizer(text)["input_ids"]} for text in _texts(8)]


@pytest.fixture
def make_trainer(tmp_path, tokenizer, train_dataset, eval_dataset) -> Callable[..., Trainer]:
    """``make_trainer(callbacks=[...], output_dir=..., with_eval=False, model=None, compute_loss_func=None, **TrainingArguments overrides)``."""

    def build(
        callbacks: list[TrainerCallback] | None = None,
        output_dir: str | Path | None = None,
        with_eval: bool = False,
        model: Any = None,
        compute_loss_func: Any = None,
        **overrides: Any,
    ) -> Trainer:
        settings: dict[str, Any] = {
            "output_dir": str(output_dir or tmp_path / "run"),
            "per_device_train_batch_size": 4,
            "per_device_eval_batch_size": 8,
            "gradient_accumulation_steps": 2,
            "learning_rate": 1e-2,
            "max_steps": 4,
            "logging_steps": 1,
            "save_strategy": "no",
            "report_to": [],
            "use_cpu": True,
            "disable_tqdm": True,
            "seed": 0,
            "dataloader_num_workers": 0,
        }
        settings.update(overrides)
        return Trainer(
            model=model if model is not None else tiny_model(tokenizer),
            args=TrainingArguments(**settings),
            train_dataset=train_dataset,
            eval_dataset=eval_dataset if with_eval else None,
            data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
            processing_class=tokenizer,
            callbacks=callbacks,
            compute_loss_func=compute_loss_func,
        )

    return build
