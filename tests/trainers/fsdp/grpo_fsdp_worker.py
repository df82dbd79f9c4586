"""GRPO under FSDP2, 2 CPU processes; run by test_fsdp_grpo.py (not a test itself).

``accelerate launch --config_file examples/accelerate/fsdp2_cpu.yaml grpo_fsdp_worker.py OUT``, with
``ACCELERATE_USE_CPU=1``. In one launch:

1. ``equal``: 2 rounds, each one optimizer step (``steps_per_generation = gradient_accumulation_steps =
   2``), so every step sees the whole round whatever the process count: the test compares it with one
   process on the same global batch. Greedy decoding makes the completions independent of the per-process
   sampling seeds, so they can be compared too; the reward adds the completion's position in its group, so
   advantages (and the loss) are not zero.
2. ``full`` / ``resumed``: one round over 2 optimizer steps, a checkpoint after step 1 (in the middle of the
   round), then a new trainer resumes from it: step 2 must use the saved round buffer, not regenerate.
3. generation on the sharded policy with a different completion length on each rank (rank 0 stops after 2
   tokens, rank 1 after 7), gathered once (the default) and on the shards
   (``TRAINWRIGHT_FSDP_GENERATION=sharded``), compared with the same backend on an unsharded copy of the
   weights, counting FSDP's all-gathers.
4. the combinations that must be refused, with their messages.

Rank 0 writes ``result.json`` and the gathered policy weights of each run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from worker_exit import write_result_and_exit

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

G = 4
PROMPTS = [f"Say {i}:" for i in range(8)]


class RecordingReward:
    """Reward = 0.1 x completion length + 0.3 x position in the group; records every call's completions."""

    __name__ = "position_reward"

    def __init__(self) -> None:
        self.calls: list[list[list[int]]] = []

    def __call__(self, completions: list[Any], completion_ids: list[list[int]], **kwargs: Any) -> list[float]:
        self.calls.append([list(ids) for ids in completion_ids])
        return [0.1 * len(ids) + 0.3 * (i % G) for i, ids in enumerate(completion_ids)]


def tiny(tokenizer: Any, seed: int) -> torch.nn.Module:
    return build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=2, num_heads=2, seed=seed)


def build(out: Path, per_device_batch: int, reward: RecordingReward, **overrides: Any) -> GRPOTrainer:
    """Shared with the single-process run of the test: the same models, data and settings."""
    tokenizer = build_tokenizer()
    settings: dict[str, Any] = {
        "output_dir": str(out),
        "per_device_train_batch_size": per_device_batch,
        "num_generations": G,
        "steps_per_generation": 2,
        "gradient_accumulation_steps": 2,
        "max_steps": 2,
        "max_completion_length": 6,
        "beta": 0.1,  # a KL term to the reference: the reference model takes part in every step
        "generation_kwargs": {"do_sample": False},
        "learning_rate": 5e-2,
        "adam_epsilon": 1e-3,  # see dpo_fsdp_worker.py: keeps AdamW's update smooth in the gradient
        "max_grad_norm": 1.0,
        "shuffle_dataset": False,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "use_cpu": True,
        "disable_tqdm": True,
        "seed": 0,
        **overrides,
    }
    dataset = Dataset.from_dict({"prompt": PROMPTS})
    return GRPOTrainer(
        tiny(tokenizer, seed=0),
        reward,
        args=GRPOConfig(**settings),
        train_dataset=dataset,
        processing_class=tokenizer,
        ref_model=tiny(tokenizer, seed=1),  # differs from the policy: the KL is not zero
    )


def main() -> None:
    torch.set_num_threads(1)
    out = Path(sys.argv[1])
    from torch.distributed.tensor import DTensor

    from trainwright.storage.module_state import full_state_dict
    from trainwright.trainers.grpo.generation import SamplingSettings, TransformersGenerateBackend

    result: dict[str, Any] = {}
    reward = RecordingReward()
    trainer = build(out / "equal", per_device_batch=4, reward=reward)
    accelerator = trainer.accelerator
    rank = accelerator.process_index
    assert accelerator.num_processes == 2, accelerator.num_processes
    trainer.train()
    result["distributed_type"] = str(accelerator.distributed_type)
    result["types"] = [type(trainer.model).__name__, type(trainer.ref_model).__name__]
    result["equal_log"] = trainer.state.log_history
    calls: list[Any] = [None, None]
    torch.distributed.all_gather_object(calls, reward.calls)
    result["equal_completions"] = [calls[0][r] + calls[1][r] for r in range(len(calls[0]))]  # per round
    policy = accelerator.get_state_dict(trainer.model)
    if accelerator.is_main_process:
        torch.save(policy, out / "equal_policy.pt")

    # 3. generation on the sharded policy, ranks stopping at different lengths; the all-gathers are counted
    # by wrapping FSDP2's parameter-group unshard (instrumentation only: it calls the original)
    from torch.distributed.fsdp._fully_shard._fsdp_param_group import FSDPParamGroup

    from trainwright.storage.module_state import fsdp_modules
    from trainwright.trainers.common.distributed import GENERATION_ENV
    from trainwright.trainers.common.fsdp_private import reshards_after_forward

    gathers = {"count": 0}
    original_unshard = FSDPParamGroup.unshard

    def counting_unshard(group: Any, async_op: bool = False) -> Any:
        if not group.is_unsharded and group._all_gather_result is None:
            gathers["count"] += 1
        return original_unshard(group, async_op)

    FSDPParamGroup.unshard = counting_unshard
    tokenizer = trainer.processing_class
    backend = TransformersGenerateBackend(
        SamplingSettings(max_completion_length=2 if rank == 0 else 7, extra={"do_sample": False}),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_ids=[tokenizer.eos_token_id],
    )
    prompt_ids = [tokenizer(p)["input_ids"] for p in PROMPTS[rank * 2 : rank * 2 + 2]]
    units = fsdp_modules(trainer.model)
    settings_before = [reshards_after_forward(u, is_root=u is trainer.model) for u in units]
    generated: dict[str, Any] = {}
    for mode in ("gather", "sharded"):
        os.environ[GENERATION_ENV] = mode
        gathers["count"] = 0
        generated[mode] = backend.generate(trainer.model, prompt_ids)
        generated[f"{mode}_all_gathers"] = gathers["count"]
        if mode == "gather":
            generated["resharded"] = all(isinstance(p, DTensor) for p in trainer.model.parameters())
            generated["settings_restored"] = settings_before == [
                reshards_after_forward(u, is_root=u is trainer.model) for u in units
            ]
    del os.environ[GENERATION_ENV]
    FSDPParamGroup.unshard = original_unshard
    generated["units"] = len(units)
    generated["layers"] = trainer.model.config.num_hidden_layers
    full_weights = full_state_dict(trainer.model)  # complete on rank 0 only
    shared: list[Any] = [full_weights if rank == 0 else None]
    torch.distributed.broadcast_object_list(shared, src=0)
    plain = tiny(tokenizer, seed=0)
    plain.load_state_dict(shared[0])
    generated["plain"] = backend.generate(plain, prompt_ids)
    per_rank: list[Any] = [None, None]
    torch.distributed.all_gather_object(per_rank, generated)
    result["generation"] = per_rank

    # 2. checkpoint in the middle of a round, then resume
    mid_round = {"gradient_accumulation_steps": 1, "save_strategy": "steps", "save_steps": 1}
    full = build(out / "full", per_device_batch=4, reward=RecordingReward(), **mid_round)
    full.train()
    result["full_log"] = full.state.log_history
    result["full_generate_calls"] = full.generation_backend.calls
    policy = accelerator.get_state_dict(full.model)
    if accelerator.is_main_process:
        torch.save(policy, out / "full_policy.pt")
    resumed = build(out / "resumed", per_device_batch=4, reward=RecordingReward(), **mid_round)
    resumed.train(resume_from_checkpoint=str(out / "full" / "checkpoint-1"))
    result["resumed_log"] = resumed.state.log_history
    result["resumed_generate_calls"] = resumed.generation_backend.calls
    policy = accelerator.get_state_dict(resumed.model)
    if accelerator.is_main_process:
        torch.save(policy, out / "resumed_policy.pt")
    result["checkpoint_files"] = sorted(os.listdir(out / "full" / "checkpoint-1"))

    # 4. refused combinations
    try:
        build(out / "refused", per_device_batch=4, reward=RecordingReward(), dynamic_sampling=True)
        result["dynamic_sampling"] = None
    except ValueError as error:
        result["dynamic_sampling"] = str(error)

    write_result_and_exit(accelerator, out, result)


if __name__ == "__main__":
    main()
