"""Small real trainers the reliability tests train, stop, damage and resume (tiny model, CPU, seconds)."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback


class StopAt(TrainerCallback):
    """Stops training after optimizer step ``step`` (a run "interrupted" there, its checkpoint written)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
        if state.global_step == self.step:
            control.should_training_stop = True
        return control


def grpo_trainer(
    output_dir: Any, callbacks: list[Any] | None = None, reward: Any = None, **overrides: Any
) -> Any:
    """A GRPOTrainer of 4 steps that saves every 2, one generation round per 4 micro-steps; ``overrides``
    change its ``GRPOConfig``."""
    from datasets import Dataset

    from trainwright import GRPOConfig, GRPOTrainer
    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=1)
    dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(24)]})

    def dense_reward(completion_ids, **kwargs):  # type: ignore[no-untyped-def]
        return [float(sum(ids) % 7) for ids in completion_ids]

    settings: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": 2,
        "num_generations": 2,
        "steps_per_generation": 4,
        "gradient_accumulation_steps": 1,
        "max_steps": 4,
        "save_steps": 2,
        "max_completion_length": 4,
        "learning_rate": 5e-3,
        "report_to": [],
        "use_cpu": True,
        "logging_steps": 1,
        "seed": 11,
    }
    settings.update(overrides)
    return GRPOTrainer(
        model,
        reward or dense_reward,
        args=GRPOConfig(**settings),
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=callbacks,
    )


def dpo_trainer(output_dir: Any, callbacks: list[Any] | None = None, **overrides: Any) -> Any:
    """A DPOTrainer of 4 steps over 8 tiny preference pairs that saves every 2; ``overrides`` change its
    ``DPOConfig``."""
    from datasets import Dataset

    from trainwright import DPOConfig, DPOTrainer
    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=0)
    pairs = Dataset.from_list([{"prompt": f"Q{i}?", "chosen": " yes", "rejected": " no"} for i in range(8)])
    settings: dict[str, Any] = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": 2,
        "max_steps": 4,
        "save_steps": 2,
        "learning_rate": 1e-2,
        "report_to": "none",
        "use_cpu": True,
        "disable_tqdm": True,
        "logging_steps": 1,
        "seed": 0,
    }
    settings.update(overrides)
    return DPOTrainer(
        model,
        args=DPOConfig(**settings),
        train_dataset=pairs,
        processing_class=tokenizer,
        callbacks=callbacks,
    )


def precomputed_dpo_trainer(output_dir: Any) -> Any:
    """A one-step DPOTrainer over 4 pairs with ``precompute_ref_log_probs``: building it writes (or reads) the
    reference log-prob cache in ``<output_dir>/ref_logps_cache``."""
    from datasets import Dataset

    from trainwright import DPOConfig, DPOTrainer
    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    rows = [{"prompt": f"Question {i}?", "chosen": " yes", "rejected": " no"} for i in range(4)]
    args = DPOConfig(
        output_dir=str(output_dir), precompute_ref_log_probs=True, per_device_train_batch_size=2,
        max_steps=1, report_to="none", save_strategy="no", use_cpu=True, disable_tqdm=True,
    )  # fmt: skip
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=0)
    return DPOTrainer(model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer)
