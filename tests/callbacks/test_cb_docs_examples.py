"""Issue 37, item 5: every Python example of docs/callbacks.md runs, against trainwright's own DPO and GRPO
trainers (``Trainer`` in the example is bound to each), on a tiny real model for a few steps.

The audit: ``ParameterScheduleCallback(trainer, "beta", ...)`` from the page raised ``AttributeError`` on our
trainers (their ``beta`` lived on ``trainer.args`` only)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import torch
from datasets import Dataset

from trainwright import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

torch.set_num_threads(1)
PAGE = Path(__file__).resolve().parents[2] / "docs" / "callbacks.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)
COMMON = {"max_steps": 3, "report_to": [], "use_cpu": True, "per_device_train_batch_size": 2, "logging_steps": 1,
          "disable_tqdm": True, "learning_rate": 1e-3}  # fmt: skip


def _namespace(kind: str, tmp_path: Path) -> dict[str, object]:
    tok = build_tokenizer()
    model = build_tiny_causal_lm(tok, hidden_size=16, num_layers=1, num_heads=2)
    if kind == "dpo":
        trainer_class: object = DPOTrainer
        args: object = DPOConfig(output_dir=str(tmp_path), **COMMON)
        ds = Dataset.from_list([{"prompt": f"Q{i}?", "chosen": " yes", "rejected": " no"} for i in range(8)])
    else:
        trainer_class = functools.partial(
            GRPOTrainer, reward_funcs=lambda completions, **kw: [1.0] * len(completions)
        )
        # beta > 0: a reference is built (beta=0, TRL's default, builds none, and scheduling it up is refused)
        args = GRPOConfig(
            output_dir=str(tmp_path), num_generations=2, max_completion_length=3, beta=0.04, **COMMON
        )
        ds = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(8)]})
    return {"Trainer": trainer_class, "model": model, "args": args, "ds": ds, "tok": tok,
            "current_commit": lambda: "0" * 40}  # fmt: skip


def test_the_page_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("kind", ["dpo", "grpo"])
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_callbacks_example_runs_on_our_trainers(tmp_path, kind, index):
    namespace = _namespace(kind, tmp_path)
    exec(compile(BLOCKS[index], f"docs/callbacks.md example {index + 1}", "exec"), namespace)  # noqa: S102
    trainer = namespace["trainer"]
    assert trainer.state.global_step == 3
    if 'ParameterScheduleCallback(trainer, "beta"' in BLOCKS[index]:
        logged = [entry["schedule/beta"] for entry in trainer.state.log_history if "schedule/beta" in entry]
        assert logged[0] == pytest.approx(0.5) and logged[-1] < logged[0]  # cosine from 0.5 towards 0.05
        assert trainer.args.beta == pytest.approx(logged[-1])  # the loss reads the scheduled value
