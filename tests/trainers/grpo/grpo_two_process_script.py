"""Run by ``accelerate launch --cpu --num_processes 2`` from test_grpo_distributed.py (not a test itself).

Each process trains 2 steps and writes, for the last generation round, its local rewards, local
advantages and prompt indices to ``<out>/rank<r>.json``.
"""

from __future__ import annotations

import json
import os
import sys

import torch
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

torch.set_num_threads(1)
out = sys.argv[1]
recorded: dict = {}


def reward(completion_ids, idx, **kwargs):
    values = [float(sum(ids) % 11) + 0.1 * i for ids, i in zip(completion_ids, idx)]
    recorded["rewards"] = values
    recorded["prompt_index"] = list(idx)
    return values


tokenizer = build_tokenizer()
model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(8)], "idx": list(range(8))})
# a round = 2 per device x 2 processes x 1 step = 4 completions = ONE group of 4, split across the processes
args = GRPOConfig(
    output_dir=out,
    per_device_train_batch_size=2,
    num_generations=4,
    max_steps=2,
    max_completion_length=4,
    report_to=[],
    save_strategy="no",
    use_cpu=True,
    logging_steps=1,
    scale_rewards="group",
    shuffle_round_rows=False,  # the buffer then lists advantages in the order the rewards were recorded
)
trainer = GRPOTrainer(model, reward, args=args, train_dataset=dataset, processing_class=tokenizer)
trainer.train()
rank = trainer.accelerator.process_index
recorded["advantages"] = trainer.round_buffer.micro_batches[0]["advantages"].tolist()
recorded["num_processes"] = trainer.accelerator.num_processes
recorded["reward_logged"] = trainer.state.log_history[-2]["reward"]
with open(f"{out}/rank{rank}.json", "w") as handle:
    json.dump(recorded, handle)
# Both ranks are done and the results are on disk: leave without interpreter teardown. gloo's destructors
# (run when DDP's reducer is freed at exit) can hang joining their threads or abort with "terminate
# called without an active exception", long after the work succeeded.
trainer.accelerator.wait_for_everyone()
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
