"""DPO benchmark body for ``trainers_vs_trl.py``: ours vs TRL's DPOTrainer, same model, data and settings.

``run(impl, size, steps, workdir, extra)`` trains ``steps`` optimizer steps and returns

* ``sec_per_step``: median wall time from ``on_step_begin`` to ``on_step_end``, first step excluded;
* ``cpu_sec_per_step``: the same span in CPU time of the training thread (``time.thread_time``): what
  the step costs, without the time spent waiting for a core on a loaded machine;
* ``train_rss_delta_mb``: peak RSS while training minus RSS just before ``train()`` (sampled every 5 ms).
  The worker's ``peak_rss_mb`` also counts imports, and TRL imports more than we do; this delta is the
  trainer's own cost;
* ``first_loss``: the loss of step 1 (ln 2 = 0.6931 for both when policy == reference), a sanity check.

Settings shared by both sides (TRL's CPU-hostile defaults overridden): float32, no gradient
checkpointing, lr 1e-4, sigmoid loss, β 0.1, 8 pairs per step, max_length 128, an explicit
``ref_model`` (a deep copy: TRL cannot copy a model built from a config), ``torch.set_num_threads(1)``.
Extra CLI arguments: ``--loss-type NAME``, ``--batch-size N``, ``--max-length N``.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import threading
import time
from typing import Any

SIZES = {"tiny": {"hidden_size": 64, "num_layers": 2}, "small": {"hidden_size": 256, "num_layers": 4}}
WARMUP_STEPS = 1  # steps excluded from sec_per_step (and from the profile window)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class _PeakSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = _rss_mb()
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, _rss_mb())
            time.sleep(0.005)


def _dataset(n: int = 64):
    from datasets import Dataset

    words = ["apple", "river", "stone", "cloud", "tiger", "lamp", "music", "green"]
    rows = [
        {
            "prompt": f"Question {i}: which word comes after {words[i % 8]}? Answer:",
            "chosen": f" {words[(i + 1) % 8]}, because the list says so.",
            "rejected": f" {words[(i + 3) % 8]}",
        }
        for i in range(n)
    ]
    return Dataset.from_list(rows)


def run(
    impl: str, size: str, steps: int, workdir: str, extra: list[str], instrument: Any = None
) -> dict[str, Any]:
    """One measurement (see the module docstring); ``instrument(trainer)`` runs before ``train()`` (profiling)."""
    import torch
    from transformers import TrainerCallback

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    parser = argparse.ArgumentParser()
    parser.add_argument("--loss-type", default="sigmoid")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-length", type=int, default=128)
    opts = parser.parse_args(extra)

    torch.set_num_threads(1)
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, seed=0, **SIZES[size])
    ref_model = copy.deepcopy(model)
    common = {
        "output_dir": os.path.join(workdir, impl),
        "per_device_train_batch_size": opts.batch_size,
        "max_steps": steps,
        "learning_rate": 1e-4,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "use_cpu": True,
        "bf16": False,
        "disable_tqdm": True,
        "beta": 0.1,
        "loss_type": [opts.loss_type],
        "max_length": opts.max_length,
        "seed": 0,
    }
    if impl == "ours":
        from trainwright import DPOConfig, DPOTrainer

        args = DPOConfig(**common)
        trainer_cls = DPOTrainer
    elif impl == "trl":
        import trl

        args = trl.DPOConfig(**common, gradient_checkpointing=False)
        trainer_cls = trl.DPOTrainer
    else:
        raise ValueError(f"impl must be 'ours' or 'trl', got {impl!r}")

    step_times: list[float] = []
    step_cpu: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            self.t0, self.c0 = time.perf_counter(), time.thread_time()

        def on_step_end(self, args, state, control, **kwargs):
            step_times.append(time.perf_counter() - self.t0)
            step_cpu.append(time.thread_time() - self.c0)

    init_start = time.perf_counter()
    trainer = trainer_cls(
        model=model,
        ref_model=ref_model,
        args=args,
        train_dataset=_dataset(),
        processing_class=tokenizer,
        callbacks=[Timer()],
    )
    init_s = time.perf_counter() - init_start
    if instrument is not None:
        instrument(trainer)
    before = _rss_mb()
    sampler = _PeakSampler()
    sampler.start()
    trainer.train()
    sampler.stop.set()
    sampler.join()
    first_loss = next(e["loss"] for e in trainer.state.log_history if "loss" in e)
    return {
        "impl": impl,
        "size": size,
        "params": sum(p.numel() for p in model.parameters()),
        "sec_per_step": statistics.median(step_times[1:] or step_times),
        "cpu_sec_per_step": statistics.median(step_cpu[1:] or step_cpu),
        "init_s": init_s,
        "train_rss_delta_mb": sampler.peak - before,
        "first_loss": first_loss,
    }
