"""A TRL 1.16 GRPO script that uses ``trainer_state``, ``log_metric`` and an ``async`` reward runs
unchanged but for its import line.

The script is written as a TRL user writes one (model and tokenizer from a folder, no
``processing_class``). It runs once with ``from trl import ...`` and once with the import swapped for
trainwright's. Generation is random in both (and seeded differently), so the comparison is on what the
script itself determines: the curriculum metric it logs from ``trainer_state``, and that both reward
functions, the async one included, were scored at every step.
"""

from __future__ import annotations

import os

import pytest

from trainwright.toy import save_tiny_model

trl = pytest.importorskip("trl")

TRL_IMPORT = "from trl import GRPOConfig, GRPOTrainer"
OUR_IMPORT = "from trainwright.trainers import GRPOConfig, GRPOTrainer"

SCRIPT = '''
import asyncio

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

dataset = Dataset.from_dict(
    {"prompt": [f"Count to {i}:" for i in range(16)], "target": [str(i % 10) for i in range(16)]}
)


def length_curriculum(completions, trainer_state, log_metric, **kwargs):
    """Ask for longer completions as training progresses."""
    target_length = 2 + 4 * trainer_state.global_step / trainer_state.max_steps
    log_metric("curriculum/target_length", target_length)
    return [-abs(len(completion) - target_length) for completion in completions]


async def mentions_target(completions, target, **kwargs):
    await asyncio.sleep(0.01)  # stands for a call to a remote judge
    return [1.0 if t in completion else 0.0 for completion, t in zip(completions, target)]


args = GRPOConfig(
    output_dir=OUTPUT_DIR,
    per_device_train_batch_size=4,
    num_generations=4,
    max_completion_length=8,
    max_steps=3,
    learning_rate=1e-3,
    logging_steps=1,
    bf16=False,
    gradient_checkpointing=False,
    report_to="none",
    use_cpu=True,
    seed=0,
)
trainer = GRPOTrainer(
    model=MODEL,
    reward_funcs=[length_curriculum, mentions_target],
    args=args,
    train_dataset=dataset,
)
trainer.train()
'''


def _run(script: str, model_dir: str, output_dir: str):
    namespace = {"__name__": "__main__", "MODEL": model_dir, "OUTPUT_DIR": output_dir}
    exec(compile(script, "grpo_script.py", "exec"), namespace)  # noqa: S102 - the test's own script
    trainer = namespace["trainer"]
    return trainer, [log for log in trainer.state.log_history if "loss" in log]


def test_trl_grpo_script_with_trainer_state_log_metric_and_async_reward_runs_unchanged(tmp_path) -> None:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    model_dir = str(save_tiny_model(tmp_path / "model", hidden_size=16, num_layers=1, num_heads=2))
    assert SCRIPT.count(TRL_IMPORT) == 1
    _, theirs = _run(SCRIPT, model_dir, str(tmp_path / "trl"))
    trainer, ours = _run(SCRIPT.replace(TRL_IMPORT, OUR_IMPORT), model_dir, str(tmp_path / "ours"))
    assert type(trainer).__module__ == "trainwright.trainers.grpo.trainer"
    expected_targets = [2 + 4 * step / 3 for step in range(3)]  # generated at global steps 0, 1, 2
    for logs in (theirs, ours):
        assert [log["step"] for log in logs] == [1, 2, 3]
        assert [log["curriculum/target_length"] for log in logs] == pytest.approx(expected_targets)
        for log in logs:
            assert 0.0 <= log["rewards/mentions_target/mean"] <= 1.0  # the async reward ran every step
            assert log["rewards/length_curriculum/mean"] <= 0.0
            assert log["reward"] == pytest.approx(
                log["rewards/length_curriculum/mean"] + log["rewards/mentions_target/mean"], abs=1e-5
            )
