"""A TRL 1.16 DPO script with ``padding_free=True`` runs unchanged but for its import line.

The script below is written as a TRL user writes one (model and tokenizer from a folder, no reference
model, no ``processing_class``). It runs once with ``from trl import ...`` and once with the import
swapped for trainwright's; both must train, and, since TRL 1.16 falls back to padding while trainwright
really packs the batch, equal losses show that packing changes nothing but the memory.
"""

from __future__ import annotations

import os

import pytest

from trainwright.toy import save_tiny_model

trl = pytest.importorskip("trl")

TRL_IMPORT = "from trl import DPOConfig, DPOTrainer"
OUR_IMPORT = "from trainwright.trainers import DPOConfig, DPOTrainer"

SCRIPT = """
from datasets import Dataset
from trl import DPOConfig, DPOTrainer

dataset = Dataset.from_dict(
    {
        "prompt": [f"Question {i}: is {chr(97 + i)} good?" for i in range(8)],
        "chosen": [" yes, it is", " sure", " yes", " of course"] * 2,
        "rejected": [" no", " never ever", " nope, bad", " no way"] * 2,
    }
)
args = DPOConfig(
    output_dir=OUTPUT_DIR,
    padding_free=True,
    per_device_train_batch_size=4,
    max_steps=3,
    learning_rate=1e-3,
    logging_steps=1,
    bf16=False,
    gradient_checkpointing=False,
    report_to="none",
    use_cpu=True,
    seed=0,
)
trainer = DPOTrainer(model=MODEL, args=args, train_dataset=dataset)
trainer.train()
"""


def _run(script: str, model_dir: str, output_dir: str) -> tuple[object, list[dict]]:
    namespace = {"__name__": "__main__", "MODEL": model_dir, "OUTPUT_DIR": output_dir}
    exec(compile(script, "dpo_script.py", "exec"), namespace)  # noqa: S102 - the test's own script
    trainer = namespace["trainer"]
    return trainer, [log for log in trainer.state.log_history if "loss" in log]


@pytest.mark.filterwarnings("ignore:.*padding_free.*")
def test_trl_dpo_script_with_padding_free_runs_unchanged(tmp_path) -> None:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    model_dir = str(save_tiny_model(tmp_path / "model", hidden_size=16, num_layers=1, num_heads=2))
    assert SCRIPT.count(TRL_IMPORT) == 1
    ours_script = SCRIPT.replace(TRL_IMPORT, OUR_IMPORT)
    _, theirs = _run(SCRIPT, model_dir, str(tmp_path / "trl"))
    trainer, ours = _run(ours_script, model_dir, str(tmp_path / "ours"))
    assert type(trainer).__module__ == "trainwright.trainers.dpo.trainer"
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(4)])
    assert batch["input_ids"].shape[0] == 1 and "position_ids" in batch  # really packed
    assert [log["step"] for log in ours] == [log["step"] for log in theirs] == [1, 2, 3]
    for mine, trl_log in zip(ours, theirs):
        for key in ("loss", "rewards/margins", "rewards/accuracies", "logps/chosen", "logps/rejected"):
            assert mine[key] == pytest.approx(trl_log[key], rel=1e-4, abs=1e-5), (mine["step"], key)
    assert ours[0]["loss"] == pytest.approx(0.693147, abs=1e-5)  # policy == reference at step 1
    assert ours[-1]["loss"] < ours[0]["loss"]  # it trains
