"""Peak memory per rank of DPO under FSDP2 with the reference sharded or replicated (a measurement, not a test).

    MALLOC_MMAP_THRESHOLD_=131072 ACCELERATE_USE_CPU=1 TRAINWRIGHT_FSDP_REFERENCE=shard \\
        accelerate launch --config_file examples/accelerate/fsdp2_cpu.yaml tests/trainers/fsdp/reference_memory.py
    ACCELERATE_USE_CPU=1 TRAINWRIGHT_FSDP_REFERENCE=replicate accelerate launch ... (same)
    ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2 tests/trainers/fsdp/reference_memory.py  # DDP

A Qwen2 of ~75M parameters (300 MB in float32) as policy and as reference, AdamW, 2 steps. Rank 0 prints one
JSON line: for each rank, ``ru_maxrss`` (peak RSS, KiB) after building the trainer and after training, and
the RSS at the end (``VmRSS``). Each rank builds both models whole before they are sharded, so the peak
after construction is about the same in every mode (sharding adds a transient copy of the shards); the
difference shows in training, where the replicated reference keeps the half of the reference that
sharding frees.

Run it with ``MALLOC_MMAP_THRESHOLD_=131072``: otherwise glibc raises its mmap threshold after the first
large free, later tensors (a decoder layer's are ~9 MB) come from the heap, and memory freed by sharding
stays in the process, so RSS no longer follows what is allocated.
"""

from __future__ import annotations

import json
import os
import resource
import sys

import torch
from datasets import Dataset

from trainwright import DPOConfig, DPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer


def vm_rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def main() -> None:
    torch.set_num_threads(1)
    tokenizer = build_tokenizer()
    size = {"hidden_size": 768, "num_layers": 8, "num_heads": 12, "intermediate_size": 3072}
    data = Dataset.from_list(
        [
            {"prompt": f"Question {i}: is {chr(97 + i)} good?", "chosen": " yes", "rejected": " no"}
            for i in range(4)
        ]
    )
    args = DPOConfig(
        output_dir="/tmp/trainwright-reference-memory",
        per_device_train_batch_size=2,
        max_steps=2,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = DPOTrainer(
        build_tiny_causal_lm(tokenizer, seed=0, **size),
        ref_model=build_tiny_causal_lm(tokenizer, seed=1, **size),
        args=args,
        train_dataset=data,
        processing_class=tokenizer,
    )
    built = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    trainer.train()
    row = {
        "mode": os.environ.get("TRAINWRIGHT_FSDP_REFERENCE", "shard") if trainer.is_fsdp_enabled else "ddp",
        "params": sum(p.numel() for p in trainer.ref_model.parameters()),
        "peak_after_build_kib": built,
        "peak_after_train_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "rss_end_kib": vm_rss_kib(),
    }
    rows: list = [None] * trainer.accelerator.num_processes
    torch.distributed.all_gather_object(rows, row)
    if trainer.accelerator.is_main_process:
        print(json.dumps(rows), flush=True)
    trainer.accelerator.wait_for_everyone()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
