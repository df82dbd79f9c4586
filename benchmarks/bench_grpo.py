#!/usr/bin/env python
"""GRPO benchmark: trainwright's GRPOTrainer vs TRL's at equal settings (used by ``trainers_vs_trl.py grpo``).

    python benchmarks/trainers_vs_trl.py grpo --repeats 3        # seconds/step and peak RSS, alternating runs
    python benchmarks/bench_grpo.py --count-generations          # generate calls, spg 1, 4, 8

Equal settings on both sides: same tiny Qwen2 built from a config (same seed), same prompts, same reward
function, per-device batch 8 completions, G=4, gradient accumulation 2, steps_per_generation 2 (=GA),
max_completion_length 16, temperature 1, loss "dapo", beta 0, fp32, no gradient checkpointing, AdamW.
The number of ``generate`` calls is counted by wrapping the model's ``generate`` the same way for both.
``sec_per_step`` is the median wall time between consecutive step ends (warm-up excluded);
``cpu_sec_per_step`` the same in CPU time of the training thread (insensitive to waiting for a core).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

SIZES = {
    "tiny": {"hidden_size": 32, "num_layers": 2, "num_heads": 4},  # ~37k parameters
    "small": {"hidden_size": 240, "num_layers": 4, "num_heads": 4},  # ~2.4M parameters
}
WARMUP_STEPS = 2


#: set by ``_worker.py --profile`` to time the reward calls as their own region (``_profile.StepProfiler``)
PROFILER: Any = None


def _reward(completions: list[str], **kwargs: Any) -> list[float]:
    if PROFILER is not None:
        PROFILER.enter("rewards")
    try:
        return [c.count("a") / len(c) if c else 0.0 for c in completions]
    finally:
        if PROFILER is not None:
            PROFILER.exit()


def _common(
    steps: int, workdir: str, ga: int = 2, spg: int | None = None, per_device: int = 8, max_len: int = 16
) -> dict[str, Any]:
    settings = {
        "output_dir": workdir,
        "per_device_train_batch_size": per_device,
        "num_generations": 4,
        "gradient_accumulation_steps": ga,
        "steps_per_generation": spg if spg is not None else ga,
        "max_completion_length": max_len,
        "max_steps": steps,
        "learning_rate": 1e-3,
        "temperature": 1.0,
        "loss_type": "dapo",
        "beta": 0.0,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": [],
        "use_cpu": True,
        "bf16": False,
        "seed": 0,
        "disable_tqdm": True,
    }
    return settings


class _StepTimer:
    """A TrainerCallback recording wall time at every optimiser step end."""

    def __new__(cls):  # defined lazily so importing this module does not import transformers
        from transformers import TrainerCallback

        class StepTimer(TrainerCallback):
            def __init__(self) -> None:
                self.times: list[float] = []
                self.cpu: list[float] = []  # CPU time of the training thread

            def on_train_begin(self, args, state, control, **kwargs):
                self.times.append(time.perf_counter())
                self.cpu.append(time.thread_time())

            def on_step_end(self, args, state, control, **kwargs):
                self.times.append(time.perf_counter())
                self.cpu.append(time.thread_time())

        return StepTimer()


def _count_generate(model: Any) -> list[int]:
    counter = [0]
    original = model.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return original(*args, **kwargs)

    model.generate = generate
    return counter


def build(impl: str, size: str, settings: dict[str, Any]) -> tuple[Any, list[int]]:
    """A trainer of ``impl`` ("ours" or "trl") and its generate-call counter."""
    from datasets import Dataset

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, seed=0, **SIZES[size])
    counter = _count_generate(model)
    dataset = Dataset.from_dict({"prompt": [f"Say something {i}:" for i in range(512)]})
    if impl == "ours":
        from trainwright import GRPOConfig, GRPOTrainer

        args = GRPOConfig(**settings)
        trainer = GRPOTrainer(model, _reward, args=args, train_dataset=dataset, processing_class=tokenizer)
    elif impl == "trl":
        import trl

        args = trl.GRPOConfig(**settings, gradient_checkpointing=False)
        trainer = trl.GRPOTrainer(
            model=model, reward_funcs=_reward, args=args, train_dataset=dataset, processing_class=tokenizer
        )
    else:
        raise ValueError(f"impl must be 'ours' or 'trl', got {impl!r}")
    return trainer, counter


def run(
    impl: str, size: str, steps: int, workdir: str, extra: list[str] | None = None, instrument: Any = None
) -> dict[str, Any]:
    """One measurement: median seconds per optimiser step (warm-up excluded) and generate calls.

    ``instrument(trainer)``, when given, is called on the built trainer before ``train()`` (profiling).
    """
    import torch

    torch.set_num_threads(1)
    if steps <= WARMUP_STEPS:
        raise ValueError(f"steps must exceed the {WARMUP_STEPS} warm-up steps, got {steps}")
    trainer, counter = build(impl, size, _common(steps, workdir))
    return {**timed_train(trainer, instrument), "generate_calls": counter[0]}


def timed_train(trainer: Any, instrument: Any = None) -> dict[str, float]:
    """Train ``trainer`` (instrumented first when asked) and return the median wall and training-thread CPU
    seconds per optimiser step after the warm-up steps."""
    timer = _StepTimer()
    trainer.add_callback(timer)
    if instrument is not None:
        instrument(trainer)
    trainer.train()
    durations = [b - a for a, b in zip(timer.times, timer.times[1:])][WARMUP_STEPS:]
    cpu = [b - a for a, b in zip(timer.cpu, timer.cpu[1:])][WARMUP_STEPS:]
    return {"sec_per_step": statistics.median(durations), "cpu_sec_per_step": statistics.median(cpu)}


def count_generations(steps: int = 4, ga: int = 8) -> list[dict[str, Any]]:
    """Generate calls for steps_per_generation 1, 4, 8 at gradient accumulation ``ga``, ours and TRL."""
    import tempfile

    import torch

    torch.set_num_threads(1)
    rows = []
    for spg in (1, 4, 8):
        row: dict[str, Any] = {"steps_per_generation": spg, "micro_steps": steps * ga}
        for impl in ("ours", "trl"):
            with tempfile.TemporaryDirectory() as workdir:
                settings = _common(steps, workdir, ga=ga, spg=spg, per_device=4, max_len=4)
                trainer, counter = build(impl, "tiny", settings)
                trainer.train()
            row[impl] = counter[0]
        row["expected"] = steps * ga // spg
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count-generations", action="store_true", help="print generate calls per spg")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--ga", type=int, default=8, help="gradient accumulation for --count-generations")
    args = parser.parse_args(argv)
    if not args.count_generations:
        parser.error("run through benchmarks/trainers_vs_trl.py grpo, or pass --count-generations")
    rows = count_generations(args.steps, args.ga)
    print(f"\ngenerate calls for {args.steps} optimiser steps x {args.ga} gradient-accumulation micro-steps")
    print("| steps_per_generation | micro-steps | trainwright | TRL | micro-steps / spg |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['steps_per_generation']} | {row['micro_steps']} | {row['ours']} | {row['trl']} | "
            f"{row['expected']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
