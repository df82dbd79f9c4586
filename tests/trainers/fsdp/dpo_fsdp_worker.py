"""DPO with TR-DPO under FSDP2, 2 CPU processes; run by test_fsdp_dpo.py (not a test itself).

``accelerate launch --config_file examples/accelerate/fsdp2_cpu.yaml dpo_fsdp_worker.py OUT``, with
``ACCELERATE_USE_CPU=1``. In one launch:

1. ``full``: 3 optimizer steps (4 pairs, 1 per device x 2 gradient-accumulation steps x 2 processes),
   TR-DPO syncing the reference after every step, a checkpoint after every step;
2. ``resumed``: a new trainer resumes from ``full``'s checkpoint-1 and trains to step 3;
3. the combinations that must be refused, with their messages;
4. ``replicated``: without TR-DPO, the reference kept whole on each rank (``TRAINWRIGHT_FSDP_REFERENCE=
   replicate``) instead of sharded.

Rank 0 writes ``result.json`` (logs, shard sizes, errors, peak RSS of both ranks) and ``*.pt`` files with
the full (gathered) policy and reference weights at the end of each run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from worker_exit import write_result_and_exit

from trainwright import DPOConfig, DPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

N_PAIRS = 4
MAX_STEPS = 3


def pairs() -> Dataset:
    return Dataset.from_list(
        [
            {"prompt": f"Question {i}: is {chr(97 + i)} good?", "chosen": " yes", "rejected": " no"}
            for i in range(N_PAIRS)
        ]
    )


def build(out: Path, per_device_batch: int, *, sync_ref_model: bool = True, **overrides: Any) -> DPOTrainer:
    """Shared with the single-process runs of the test: the same models, data and settings."""
    tokenizer = build_tokenizer()
    settings: dict[str, Any] = {
        "output_dir": str(out),
        "per_device_train_batch_size": per_device_batch,
        "gradient_accumulation_steps": 2,
        "max_steps": MAX_STEPS,
        "logging_steps": 1,
        "learning_rate": 5e-2,
        "max_grad_norm": 1.0,  # clipping runs on sharded (DTensor) gradients under FSDP
        # AdamW (its state is sharded too, and checkpointed); a large epsilon keeps its update smooth in
        # the gradient: with 1e-8, near-zero gradients (float noise) get updates of size lr, so summation
        # order alone would move some weights by ~1e-5 between FSDP and one process.
        "adam_epsilon": 1e-3,
        "sync_ref_model": sync_ref_model,
        "ref_model_sync_steps": 1,
        "ref_model_mixup_alpha": 0.5,
        "save_strategy": "steps",
        "save_steps": 1,
        "report_to": "none",
        "use_cpu": True,
        "disable_tqdm": True,
        "seed": 0,
        **overrides,
    }
    return DPOTrainer(
        build_tiny_causal_lm(tokenizer, seed=0),
        ref_model=build_tiny_causal_lm(tokenizer, seed=1),  # differs from the policy: a real loss from step 1
        args=DPOConfig(**settings),
        train_dataset=pairs(),
        processing_class=tokenizer,
    )


def local_and_full_numel(module: torch.nn.Module) -> tuple[int, int]:
    """Elements this process holds, and elements of the whole module."""
    from torch.distributed.tensor import DTensor

    local = full = 0
    for param in module.parameters():
        full += param.numel()
        local += param.to_local().numel() if isinstance(param, DTensor) else param.numel()
    return local, full


def main() -> None:
    torch.set_num_threads(1)
    out = Path(sys.argv[1])
    from trainwright.storage.module_state import full_state_dict
    from trainwright.trainers.common.distributed import REFERENCE_ENV

    result: dict[str, Any] = {}
    trainer = build(out / "full", per_device_batch=1)
    accelerator = trainer.accelerator
    assert accelerator.num_processes == 2, accelerator.num_processes
    result["distributed_type"] = str(accelerator.distributed_type)
    result["ref_type"] = type(trainer.ref_model).__name__
    result["ref_numel_before_train"] = local_and_full_numel(trainer.ref_model)
    trainer.train()
    result["policy_type"] = type(trainer.model).__name__
    result["policy_numel"] = local_and_full_numel(trainer.model)
    result["full_log"] = trainer.state.log_history
    policy = accelerator.get_state_dict(trainer.model)  # collectives: every rank takes part
    reference = full_state_dict(trainer.ref_model)
    if accelerator.is_main_process:
        torch.save(policy, out / "full_policy.pt")
        torch.save(reference, out / "full_reference.pt")

    resumed = build(out / "resumed", per_device_batch=1)
    resumed.train(resume_from_checkpoint=str(out / "full" / "checkpoint-1"))
    result["resumed_log"] = resumed.state.log_history
    result["resumed_syncs"] = next(
        c.num_syncs for c in resumed.callback_handler.callbacks if hasattr(c, "num_syncs")
    )
    policy = accelerator.get_state_dict(resumed.model)
    reference = full_state_dict(resumed.ref_model)
    if accelerator.is_main_process:
        torch.save(policy, out / "resumed_policy.pt")
        torch.save(reference, out / "resumed_reference.pt")

    os.environ[REFERENCE_ENV] = "replicate"
    try:
        build(out / "refused", per_device_batch=1)
        result["replicate_with_sync"] = None
    except ValueError as error:
        result["replicate_with_sync"] = str(error)
    replicated = build(out / "replicated", per_device_batch=1, sync_ref_model=False, save_strategy="no")
    result["replicated_ref_type"] = type(replicated.ref_model).__name__
    replicated.train()
    result["replicated_log"] = replicated.state.log_history
    del os.environ[REFERENCE_ENV]

    try:  # last: a refused build leaves accelerate's state as plain DDP
        build(out / "fsdp1", per_device_batch=1, fsdp=True, fsdp_config={"version": 1})
        result["fsdp1"] = None
    except ValueError as error:
        result["fsdp1"] = str(error)

    write_result_and_exit(accelerator, out, result)


if __name__ == "__main__":
    main()
