"""Two processes (gloo, CPU) save checkpoints with CheckpointGuardCallback; rank 1 writes its own file
into each checkpoint slowly, in on_save before the guard (like a per-rank GRPO buffer). The guard's
barrier must make rank 0 wait for it before writing the marker."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch
from transformers import DataCollatorForLanguageModeling, Trainer, TrainerCallback, TrainingArguments

from trainwright.callbacks import CheckpointGuardCallback
from trainwright.toy import build_tiny_causal_lm, build_tokenizer


class SlowRankFile(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        if args.process_index == 1:
            time.sleep(0.5)
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            (folder / "rank1_extra.txt").write_text(f"step {state.global_step}")


def main(out: str) -> None:
    torch.set_num_threads(1)
    tokenizer = build_tokenizer()
    dataset = [{"input_ids": tokenizer("the quick brown fox " * (1 + i % 3))["input_ids"]} for i in range(16)]
    args = TrainingArguments(
        output_dir=str(Path(out) / "run"),
        per_device_train_batch_size=2,
        max_steps=2,
        save_steps=1,
        logging_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = Trainer(
        model=build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2),
        args=args,
        train_dataset=dataset,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
        processing_class=tokenizer,
        callbacks=[SlowRankFile()],
    )
    trainer.add_callback(CheckpointGuardCallback())
    trainer.train()
    Path(out, f"rank{args.process_index}.json").write_text(json.dumps({"num_processes": args.world_size}))


if __name__ == "__main__":
    main(sys.argv[1])
