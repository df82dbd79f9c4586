"""Where a training step's time goes, for our trainers and TRL's alike (``trainers_vs_trl.py --profile``).

Method: timing hooks on entry points that *both* implementations go through, installed on the built
trainer's objects (instances only; TRL's source is not touched):

* ``model.generate`` (instance attribute) and our trainer's ``generation_backend.generate`` (which
  prefills the prompts before calling ``model.generate``)              -> ``generation``
* the policy's ``forward`` (instance attribute, installed *after* the trainer is built, so it wraps
  TRL's fused-LM-head forward too): with grad enabled                   -> ``policy forward``;
  without grad, outside ``generate``                                    -> ``old log-probs`` (GRPO) /
  ``reference forward`` (DPO with a PEFT reference; not benchmarked)
* the reference model's ``forward``                                    -> ``reference forward``
* ``trainer.compute_loss``, minus the forwards nested in it             -> ``log-probs & loss``
* ``trainer.accelerator.backward``                                     -> ``backward``
* ``accelerator.clip_grad_norm_`` and ``Optimizer.step`` (torch's global step pre/post hooks)
                                                                       -> ``optimizer``
* ``trainer.get_batch_samples`` (dataset fetch + collation)            -> ``data/collation``
* the tokenizer's ``__call__`` / ``encode`` / ``apply_chat_template`` / ``decode`` / ``batch_decode``
  (a subclass swapped in on the instance)                              -> ``tokenise/decode``
* the benchmark's reward function (GRPO)                               -> ``rewards``
* ``everything else`` = window wall time − the sum of the above, so the shares add up to 100 % by
  construction. It holds the Trainer loop, callbacks, scheduler, ``zero_grad``, padding / batching of
  completions, metric bookkeeping and logging.

Regions nest (a forward inside ``generate`` or ``compute_loss``); each region's time is *exclusive*:
a region's own elapsed time minus that of the regions opened inside it, so nothing is counted twice.
The window runs from the end of the last warm-up step to the end of the last step, so it covers whole
optimiser steps, data loading included (``sec_per_step`` of ``bench_dpo`` starts at ``on_step_begin``,
after the batch was fetched).

Accuracy: on CPU every torch op completes before it returns (the benchmark runs one intra-op thread),
so the wall time between a hook's entry and exit is the work done inside it; on CUDA the hooks call
``torch.cuda.synchronize()`` at each boundary so queued kernels are charged to the region that
launched them. A hook costs two ``perf_counter`` calls and a list push/pop (~1 µs); a step opens
fewer than 100 regions and lasts tens to hundreds of milliseconds, so the instrumentation adds well
under 0.1 % (the profiled ``sec_per_step`` is printed next to the shares as a check). Sampling
profilers (``sys.setprofile``, ``torch.profiler``) were not used: per-call callbacks inside the
transformers forward slow it several-fold and unevenly, which distorts exactly the shares being measured.

Caveat when comparing rows: TRL's forward is its fused LM head, which computes the per-token log-probs
inside ``forward``; ours projects the kept positions in ``forward`` and takes the log-softmax in
``compute_loss``. Compare ``policy forward + log-probs & loss`` across implementations.
``--profile-clock cpu`` uses this thread's CPU time instead of wall time (less sensitive to other
load on a shared machine; waits are not counted).
"""

from __future__ import annotations

import functools
import time
from collections import defaultdict
from typing import Any

import torch
import torch.optim.optimizer as optim_hooks

GRPO_CATEGORIES = (
    "generation",
    "policy forward",
    "log-probs & loss",
    "backward",
    "optimizer",
    "old log-probs",
    "reference forward",
    "rewards",
    "tokenise/decode",
    "data/collation",
)
DPO_CATEGORIES = (
    "policy forward",
    "reference forward",
    "log-probs & loss",
    "backward",
    "optimizer",
    "data/collation",
    "tokenise/decode",
)
ELSE = "everything else"


class StepProfiler:
    """Exclusive time per category over a window of whole optimiser steps."""

    def __init__(self, algo: str, warmup_steps: int, clock: str = "wall") -> None:
        self.grpo = algo == "grpo"
        self.warmup_steps = warmup_steps
        self.now = time.perf_counter if clock == "wall" else time.thread_time
        self.sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
        self.totals: dict[str, float] = defaultdict(float)
        self.stack: list[list[Any]] = []  # [category, start, time of nested regions]
        self.active = False
        self.window_start = self.window_end = 0.0
        self.steps = 0

    # ------------------------------------------------------------------ regions
    def region(self, category: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter(category)
            try:
                return fn(*args, **kwargs)
            finally:
                self.exit()

        return timed

    def enter(self, category: str) -> None:
        self.sync()
        self.stack.append([category, self.now(), 0.0])

    def exit(self) -> None:
        self.sync()
        category, start, nested = self.stack.pop()
        elapsed = self.now() - start
        if self.active:
            self.totals[category] += elapsed - nested
        if self.stack:
            self.stack[-1][2] += elapsed

    def inside(self, category: str) -> bool:
        return any(frame[0] == category for frame in self.stack)

    # ------------------------------------------------------------------ installation
    def install(self, trainer: Any) -> None:
        """Hook ``trainer`` (built, not yet trained), its policy, reference model and tokenizer."""
        from transformers import TrainerCallback

        profiler = self
        model, ref_model = trainer.model, getattr(trainer, "ref_model", None)
        tokenizer = trainer.processing_class

        if hasattr(model, "generate"):
            model.generate = self.region("generation", model.generate)
        backend = getattr(trainer, "generation_backend", None)  # ours: its prompt prefill is generation too
        if backend is not None and hasattr(backend, "generate"):
            backend.generate = self.region("generation", backend.generate)

        policy_forward = model.forward

        @functools.wraps(policy_forward)
        def forward(*args: Any, **kwargs: Any) -> Any:
            if profiler.inside("generation"):
                return policy_forward(*args, **kwargs)
            if torch.is_grad_enabled():
                category = "policy forward"
            else:
                category = "old log-probs" if profiler.grpo else "reference forward"
            profiler.enter(category)
            try:
                return policy_forward(*args, **kwargs)
            finally:
                profiler.exit()

        model.forward = forward
        if ref_model is not None and ref_model is not model:
            ref_model.forward = self.region("reference forward", ref_model.forward)
        trainer.compute_loss = self.region("log-probs & loss", trainer.compute_loss)
        trainer.get_batch_samples = self.region("data/collation", trainer.get_batch_samples)
        accelerator = trainer.accelerator
        accelerator.backward = self.region("backward", accelerator.backward)
        accelerator.clip_grad_norm_ = self.region("optimizer", accelerator.clip_grad_norm_)
        optim_hooks.register_optimizer_step_pre_hook(lambda *a, **k: profiler.enter("optimizer"))
        optim_hooks.register_optimizer_step_post_hook(lambda *a, **k: profiler.exit())
        if tokenizer is not None:
            self._wrap_tokenizer(tokenizer)

        class Window(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                profiler.sync()
                if state.global_step == profiler.warmup_steps:
                    profiler.active = True
                    profiler.window_start = profiler.now()
                    profiler.totals.clear()
                elif profiler.active:
                    profiler.window_end = profiler.now()
                    profiler.steps = state.global_step - profiler.warmup_steps

        trainer.add_callback(Window())

    def _wrap_tokenizer(self, tokenizer: Any) -> None:
        profiler = self
        base = type(tokenizer)
        methods = {}
        for name in ("__call__", "encode", "apply_chat_template", "decode", "batch_decode"):
            original = getattr(base, name, None)
            if original is None:
                continue

            def make(original: Any) -> Any:
                @functools.wraps(original)
                def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
                    if profiler.inside("tokenise/decode"):  # batch_decode -> decode, __call__ -> encode ...
                        return original(self, *args, **kwargs)
                    profiler.enter("tokenise/decode")
                    try:
                        return original(self, *args, **kwargs)
                    finally:
                        profiler.exit()

                return timed

            methods[name] = make(original)
        tokenizer.__class__ = type(base.__name__, (base,), methods)

    # ------------------------------------------------------------------ results
    def result(self, categories: tuple[str, ...]) -> dict[str, float]:
        """Seconds per optimiser step of each category, plus ``everything else`` and ``profiled_sec_per_step``."""
        steps = max(self.steps, 1)
        window = self.window_end - self.window_start
        per_step = {name: self.totals.get(name, 0.0) / steps for name in categories}
        unknown = set(self.totals) - set(categories)
        for name in unknown:  # a category this algorithm does not list (should not happen): keep it visible
            per_step[name] = self.totals[name] / steps
        per_step[ELSE] = window / steps - sum(per_step.values())
        per_step["profiled_sec_per_step"] = window / steps
        return per_step


def format_profile(algo: str, profiles: dict[str, list[dict[str, float]]], clock: str, repeats: int) -> str:
    """A markdown table: median ms/step and share of the step, ours and TRL side by side."""
    import statistics

    categories = [*(GRPO_CATEGORIES if algo == "grpo" else DPO_CATEGORIES), ELSE]
    medians = {
        impl: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        for impl, runs in profiles.items()
    }
    # shares of the median step: each category's median over the median total of its parts, so they add to 100 %
    lines = [
        f"\n{algo.upper()} profile ({clock} clock): median over {repeats} alternating runs, ms per optimiser step",
        "| part of the step | trainwright ms | trainwright % | TRL ms | TRL % | ours − TRL ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    totals = {impl: sum(medians[impl].get(c, 0.0) for c in categories) for impl in medians}
    for category in categories:
        ours, theirs = medians["ours"].get(category, 0.0), medians["trl"].get(category, 0.0)
        lines.append(
            f"| {category} | {ours * 1e3:.1f} | {100 * ours / totals['ours']:.1f} | {theirs * 1e3:.1f} | "
            f"{100 * theirs / totals['trl']:.1f} | {(ours - theirs) * 1e3:+.1f} |"
        )
    lines.append(
        f"| **total** | {totals['ours'] * 1e3:.1f} | 100.0 | {totals['trl'] * 1e3:.1f} | 100.0 | "
        f"{(totals['ours'] - totals['trl']) * 1e3:+.1f} |"
    )
    return "\n".join(lines)
