"""The small GRPO configuration most trainer tests start from (4 completions per prompt, 3 new tokens,
no saving, CPU), with per-test overrides."""

from __future__ import annotations

from trainwright import GRPOConfig


def small_config(tmp_path, **overrides) -> GRPOConfig:  # type: ignore[no-untyped-def]
    settings = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "max_completion_length": 3,
        "report_to": [],
        "save_strategy": "no",
        "use_cpu": True,
        "logging_steps": 1,
        "learning_rate": 1e-3,
    }
    settings.update(overrides)
    return GRPOConfig(**settings)
