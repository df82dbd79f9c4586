"""``kill -9`` during checkpoint saves: every resume must come from the newest complete checkpoint.

The audit: 15 of 24 ``resume_from_checkpoint=True`` resumes after a kill during a save crashed on the
half-written folder. Here a plain ``Trainer`` with ``CheckpointGuardCallback`` is killed 20 times at
random moments inside its saves, each time resuming in a fresh process with
``newest_complete_checkpoint`` (see ``kill_harness`` for how the kills are timed and checked).
"""

from __future__ import annotations

import pytest
from kill_harness import run_kill_chain

PLAIN_TRAINER_CHILD = """
import torch
from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

from kill_child import SaveProbe, emit, output_dir
from trainwright.callbacks import CheckpointGuardCallback, newest_complete_checkpoint
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

torch.set_num_threads(1)
tokenizer = build_tokenizer()
words = "the quick brown fox jumps over a lazy dog while helpful assistants answer".split()
dataset = [{"input_ids": tokenizer(" ".join(words[i % 7: i % 7 + 3 + i % 5]))["input_ids"]} for i in range(64)]

resume = newest_complete_checkpoint(output_dir())
emit("RESUMED", resume)
args = TrainingArguments(
    output_dir=output_dir(), per_device_train_batch_size=2, max_steps=1000, save_steps=1,
    save_total_limit=SAVE_TOTAL_LIMIT, logging_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True,
    seed=0, dataloader_num_workers=0,
)
trainer = Trainer(
    model=build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2),
    args=args, train_dataset=dataset, data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    processing_class=tokenizer,
)
trainer.add_callback(CheckpointGuardCallback(fsync=FSYNC))
trainer.add_callback(SaveProbe())  # after the guard: SAVED means the marker is written
trainer.train(resume_from_checkpoint=resume)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "save_total_limit, fsync, trials",
    [
        (2, True, 20),  # the 20 kills, with the guard's defaults
        # rotation deletes the previous checkpoint before the new one is marked; without fsync the guard's
        # share of the save is short, so more kills land inside the Trainer's own writes
        (1, False, 8),
    ],
)
def test_plain_trainer_survives_kills_during_saves(zygote, tmp_path, save_total_limit, fsync, trials):
    script = PLAIN_TRAINER_CHILD.replace("SAVE_TOTAL_LIMIT", str(save_total_limit)).replace(
        "FSYNC", str(fsync)
    )
    report = run_kill_chain(zygote, script, tmp_path, trials=trials, seed=save_total_limit)
    print(report.summary())
    assert len(report.trials) == trials
    # the kills really tore saves: most left a folder that is not complete
    torn = trials - report.count("complete") - report.count("absent")
    assert torn >= trials // 4, report.summary()
