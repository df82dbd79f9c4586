#!/usr/bin/env python
"""Where a training step's peak memory is, for our trainers and TRL's alike (issue 24's RSS goal).

    python benchmarks/_memprobe.py dpo ours --config 125m --steps 3
    python benchmarks/_memprobe.py grpo trl --config qwen2.5-0.5b --steps 3 --spg 1

Why not torch.profiler: its per-op memory records at 0.5B cost minutes per step and change the timing
of frees; peak RSS is what issue 24 compares, so this samples it directly. A thread reads
``/proc/self/statm`` every millisecond while the main thread labels the phase it is in, through hooks on
entry points both implementations go through (the same ones as ``_profile.py``): ``compute_loss``
(forward + log-probs + loss), ``accelerator.backward``, the optimizer step (torch's global optimizer
hooks) and everything else. Per step it prints each phase's peak RSS. ``--saved`` also adds up the
distinct storages autograd saves for backward inside ``compute_loss`` (``saved_tensors_hooks``), the
largest listed with their shapes, which is what lives from the forward to the end of the backward.

Same trainer set-up as ``real_size.py`` (its ``build_dpo`` / ``build_grpo``), one fresh process per run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch
import torch.optim.optimizer as optim_hooks

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
PAGE = os.sysconf("SC_PAGE_SIZE")


class RssSampler:
    """Peak resident set size per (step, phase), sampled every ``interval`` seconds by a daemon thread."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.step = 0
        self.phase = "setup"
        self.peaks: dict[tuple[int, str], int] = defaultdict(int)
        self._stop = threading.Event()
        self._statm = open("/proc/self/statm", "rb")  # noqa: SIM115 - read for the whole run
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        self._statm.seek(0)
        return int(self._statm.read().split()[1]) * PAGE

    def _run(self) -> None:
        while not self._stop.is_set():
            key = (self.step, self.phase)
            value = self.rss()
            self.peaks[key] = max(self.peaks[key], value)
            time.sleep(self.interval)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def live_tensors(trainer: Any) -> dict[str, Any]:
    """Bytes of the distinct tensor storages Python can reach at a step's end, by owner: parameters,
    their gradients, optimizer state, and the rest (the largest of which are listed with their shapes)."""
    import gc

    def storage(t: torch.Tensor) -> tuple[int, int]:
        s = t.untyped_storage()
        return s.data_ptr(), s.nbytes()

    owners: dict[int, str] = {}
    for model in {
        id(m): m for m in (trainer.model, getattr(trainer, "ref_model", None)) if m is not None
    }.values():
        for p in model.parameters():
            owners.setdefault(storage(p)[0], "parameters")
            if p.grad is not None:
                owners.setdefault(storage(p.grad)[0], "gradients")
        for b in model.buffers():
            owners.setdefault(storage(b)[0], "buffers")
    optimizer = getattr(trainer, "optimizer", None)
    if optimizer is not None:
        for state in optimizer.state.values():
            for value in state.values():
                if isinstance(value, torch.Tensor):
                    owners.setdefault(storage(value)[0], "optimizer")
    totals: dict[str, int] = defaultdict(int)
    seen: dict[int, tuple[int, tuple[int, ...]]] = {}
    for obj in gc.get_objects():
        if isinstance(obj, torch.Tensor) and not obj.is_meta:
            ptr, nbytes = storage(obj)
            if ptr and ptr not in seen:
                seen[ptr] = (nbytes, tuple(obj.shape))
    for ptr, (nbytes, _) in seen.items():
        totals[owners.get(ptr, "other")] += nbytes
    others = sorted((v for p, v in seen.items() if p not in owners), reverse=True)[:6]
    return {
        "mib": {k: round(v / 2**20) for k, v in sorted(totals.items())},
        "largest_other": [(round(b / 2**20, 1), shape) for b, shape in others],
    }


def install(trainer: Any, sampler: RssSampler, saved: bool, live: bool = False) -> dict[str, Any]:
    """Label phases on ``trainer`` (instance attributes only); with ``saved``, tally saved tensors; with
    ``live``, list the tensors alive at each step's end (:func:`live_tensors`)."""
    from transformers import TrainerCallback

    report: dict[str, Any] = {"saved": [], "live": []}

    def labelled(phase: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            before = sampler.phase
            sampler.phase = phase
            try:
                return fn(*args, **kwargs)
            finally:
                sampler.phase = before

        return wrapper

    compute_loss = trainer.compute_loss

    def counted_loss(*args: Any, **kwargs: Any) -> Any:
        if not (saved and torch.is_grad_enabled()):
            return compute_loss(*args, **kwargs)
        storages: dict[int, tuple[int, tuple[int, ...], str]] = {}

        def pack(t: torch.Tensor) -> torch.Tensor:
            try:
                s = t.untyped_storage()
                storages[s.data_ptr()] = (s.nbytes(), tuple(t.shape), str(t.dtype))
            except (RuntimeError, NotImplementedError):
                pass
            return t

        params = {p.untyped_storage().data_ptr() for p in trainer.model.parameters()}
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = compute_loss(*args, **kwargs)
        mine = {k: v for k, v in storages.items() if k not in params}
        big = sorted(mine.values(), reverse=True)[:8]
        report["saved"].append(
            {
                "step": sampler.step,
                "total_mib": sum(v[0] for v in mine.values()) / 2**20,
                "count": len(mine),
                "largest": [(round(b / 2**20, 1), shape, dtype) for b, shape, dtype in big],
            }
        )
        return out

    trainer.compute_loss = labelled("forward+loss", counted_loss)
    trainer.accelerator.backward = labelled("backward", trainer.accelerator.backward)
    generate = trainer.model.generate
    trainer.model.generate = labelled("generate", generate)
    state = {"before": "other"}

    def pre(*_: Any) -> None:
        state["before"] = sampler.phase
        sampler.phase = "optimizer"

    def post(*_: Any) -> None:
        sampler.phase = state["before"]

    optim_hooks.register_optimizer_step_pre_hook(pre)
    optim_hooks.register_optimizer_step_post_hook(post)

    class Steps(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            sampler.step, sampler.phase = 1, "other"

        def on_step_end(self, args, state, control, **kwargs):
            if live:
                report["live"].append((sampler.step, live_tensors(trainer)))
            sampler.step += 1

    trainer.add_callback(Steps())
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("algo", choices=["dpo", "grpo"])
    parser.add_argument("impl", choices=["ours", "trl"])
    parser.add_argument("--config", default="125m")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--spg", type=int, default=1)
    parser.add_argument("--saved", action="store_true", help="tally tensors saved for backward")
    parser.add_argument("--live", action="store_true", help="tensors alive at each step's end")
    parser.add_argument("--no-sharing", action="store_true", help="ours: no shared-prefix forward / prefill")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import tempfile

    import real_size

    torch.set_num_threads(real_size.THREADS)
    sampler = RssSampler()
    sampler.start()
    path = real_size.model_folder(args.config)
    with tempfile.TemporaryDirectory() as workdir:
        if args.algo == "dpo":
            trainer = real_size.build_dpo(args.impl, path, workdir, args.steps)
        else:
            trainer = real_size.build_grpo(args.impl, path, workdir, args.steps, args.spg)
        if args.no_sharing and args.impl == "ours":
            from trainwright.trainers.common.logprobs import PrefixSharing

            trainer._prefix_sharing = PrefixSharing(enabled=False)
            backend = getattr(trainer, "generation_backend", None)
            if backend is not None:
                backend.prompt_sharing.enabled = False
        report = install(trainer, sampler, args.saved, args.live)
        trainer.train()
    sampler.stop()
    gib = 2**30
    print(
        f"{args.algo} {args.impl} {args.config}: ru_maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB"
    )
    for (step, phase), value in sorted(sampler.peaks.items()):
        print(f"  step {step} {phase:<13} {value / gib:6.2f} GiB")
    for entry in report["saved"]:
        print(
            f"  saved for backward, step {entry['step']}: {entry['total_mib']:.0f} MiB in {entry['count']} storages"
        )
        for item in entry["largest"]:
            print(f"    {item}")
    for step, entry in report["live"]:
        print(
            f"  alive at the end of step {step}: {entry['mib']} MiB; largest other {entry['largest_other']}"
        )
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    print(json.dumps({"losses": losses}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
