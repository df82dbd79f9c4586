"""Periodic ``gc.collect`` / accelerator cache clearing, and peak memory in the training logs.

Replaces ``training_step`` overrides that call ``gc.collect()`` and ``torch.cuda.empty_cache()`` every
N steps and log ``torch.cuda.max_memory_allocated()`` by hand.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._logs import add_to_logs, is_training_log

_MIB = 2**20


def peak_rss_mib() -> float | None:
    """Peak resident set size of this process in MiB (``getrusage``; None where unavailable, e.g. Windows)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes
    return peak / _MIB if sys.platform == "darwin" else peak / 1024


def clear_accelerator_cache() -> None:
    """Return cached, unused blocks of the CUDA / XPU / MPS allocator to the device."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        torch.xpu.empty_cache()
    if hasattr(torch, "mps") and torch.backends.mps.is_available():
        torch.mps.empty_cache()


class MemoryCallback(TrainerCallback):
    """Every ``every_n_steps`` optimizer steps run ``gc.collect()`` (and clear the device cache); log peak memory.

    Replaces: ``training_step`` overrides that collect garbage / empty the CUDA cache and log memory.

    Events: ``on_step_end`` (after the optimizer step and ``zero_grad``, so gradients are freed) does the
    collection; ``on_log`` adds to the training log ``memory/peak_rss_mib`` (process high-water mark) and,
    when CUDA is in use, ``memory/cuda_peak_allocated_mib`` and ``memory/cuda_peak_reserved_mib`` (the peak
    since the previous log when ``reset_peak=True``, else since the start), plus
    ``memory/gc_collected`` (objects freed by this callback's collections since the previous log).

    ``TrainingArguments.torch_empty_cache_steps`` empties the cache without ``gc.collect``; this callback
    is for when Python-side reference cycles (e.g. in custom losses) hold tensors.
    """

    def __init__(
        self, every_n_steps: int | None = 50, empty_cache: bool = True, reset_peak: bool = True
    ) -> None:
        if every_n_steps is not None and (not isinstance(every_n_steps, int) or every_n_steps < 1):
            raise ValueError(
                f"every_n_steps must be an integer >= 1 (or None: never collect), got {every_n_steps!r}"
            )
        self.every_n_steps = every_n_steps
        self.empty_cache = empty_cache
        self.reset_peak = reset_peak
        self.collected_at_steps: list[int] = []
        self._collected_since_log = 0

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self.every_n_steps is None or state.global_step % self.every_n_steps != 0:
            return
        self._collected_since_log += gc.collect()
        if self.empty_cache:
            clear_accelerator_cache()
        self.collected_at_steps.append(state.global_step)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is None or not is_training_log(logs):
            return
        values: dict[str, float] = {}
        rss = peak_rss_mib()
        if rss is not None:
            values["memory/peak_rss_mib"] = rss
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            values["memory/cuda_peak_allocated_mib"] = torch.cuda.max_memory_allocated() / _MIB
            values["memory/cuda_peak_reserved_mib"] = torch.cuda.max_memory_reserved() / _MIB
            if self.reset_peak:
                torch.cuda.reset_peak_memory_stats()
        if self.every_n_steps is not None:
            values["memory/gc_collected"] = self._collected_since_log
            self._collected_since_log = 0
        add_to_logs(state, logs, values)
