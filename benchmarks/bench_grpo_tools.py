#!/usr/bin/env python
"""Tool-calling GRPO benchmark: ours vs TRL with ``environment_factory=`` (used by ``trainers_vs_trl.py grpo_tools``).

    python benchmarks/trainers_vs_trl.py grpo_tools --sizes tiny,small --repeats 3 [--same-rollouts | --sampled-rollouts]

Equal settings on both sides: the nudged tool-calling toy model of ``trainwright.toy_tools`` (below), the
calculator environment of ``examples/grpo_calculator_tool.py``,
``max_tool_calling_iterations=2``, ``max_completion_length=48``, and otherwise ``bench_grpo``'s settings
(per-device batch 8, G=4, GA 2 = steps_per_generation, dapo, beta 0, fp32, AdamW). The tokenizer gets
trainwright's ChatML response template on both sides (TRL only knows the templates it ships).
``sec_per_step`` is the median wall time per optimiser step after the warm-up steps.

Rollouts of the same shape by default (``--lengths-rollouts``): after every assistant header the nudge
makes a tool call certain (logit 16) but leaves which of the four a free draw, and a call ends the turn;
so on both sides every rollout makes two calls (one per turn, then ``max_tool_calling_iterations`` ends
it), samples the same number of tokens and gets results of one or two digits, while the rows of a group
still differ as sampled text does. Each library draws with its own random numbers, so the calls differ,
the work does not: the ratio measures the trainers. ``--same-rollouts`` makes the call certain too
(``6 * 7`` every time): both sides then run identical sequences, which is a best case for trainwright
(the G rows of a group are equal, so its shared-prompt prefill and forward run one row per group).
``--sampled-rollouts`` lets the model end its turn instead of calling (about evenly): the two sides then
make different numbers of tool calls, and a call costs a whole turn (another ``generate`` call, a longer
sequence to score), so that ratio mostly measures the sampled text. ``tool_calls_per_rollout``,
``generate_calls`` and ``sampled_tokens`` (``completions/mean_length``: the model's tokens per
completion, tool results left out, as both log it) are reported per side.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from bench_grpo import SIZES, WARMUP_STEPS, _common, _count_generate, timed_train

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from grpo_calculator_tool import EXPRESSIONS, CalculatorEnv  # the example's environment

#: the nudges: rollouts of equal shape (the default), identical rollouts, or freely sampled ones
ROLLOUTS = ("lengths", "same", "sampled")


def nudge(calls: list[str], rollouts: str) -> dict[str, dict[str, float]]:
    """Next-token logits after the assistant header and after each call (see the module docstring)."""
    if rollouts == "lengths":  # logits 16: a call at every turn, which one is a free draw
        return {"assistant\n": dict.fromkeys(calls, 16.0)} | {call: {"<|im_end|>": 16.0} for call in calls}
    if rollouts == "same":  # logits 16: both libraries make the same calls whatever their random draws
        return {"assistant\n": {calls[1]: 16.0}, calls[1]: {"<|im_end|>": 16.0}}
    if rollouts == "sampled":  # a call or the end of the turn, about evenly
        start = {"assistant\n": dict.fromkeys(calls, 6.0) | {"<|im_end|>": 6.0}}
        return start | {call: {"<|im_end|>": 8.0} for call in calls}
    raise ValueError(f"rollouts must be one of {ROLLOUTS}, got {rollouts!r}")


def build(impl: str, size: str, settings: dict[str, Any], rollouts: str = "lengths") -> Any:
    """A tool-calling trainer of ``impl`` ("ours" or "trl") on the nudged toy model of ``size``."""
    from datasets import Dataset

    from trainwright.toy_tools import build_tool_model, build_tool_tokenizer, tool_call_text
    from trainwright.trainers.grpo.tool_chat import CHATML_TOOL_RESPONSE_TEMPLATE

    calls = [tool_call_text("calculator", {"expression": e}) for e in EXPRESSIONS]
    tokenizer = build_tool_tokenizer(calls)
    tokenizer.response_template = dict(CHATML_TOOL_RESPONSE_TEMPLATE)
    shape = SIZES[size]
    model = build_tool_model(
        tokenizer, nudge(calls, rollouts), hidden_size=max(64, shape["hidden_size"]), seed=0
    )
    model.generate_counter = _count_generate(model)
    rows = [e for _ in range(128) for e in EXPRESSIONS]
    dataset = Dataset.from_dict(
        {"prompt": [[{"role": "user", "content": f"Compute {e}."}] for e in rows], "expression": rows}
    )
    settings = {**settings, "max_tool_calling_iterations": 2}
    common = {"model": model, "reward_funcs": None, "train_dataset": dataset, "processing_class": tokenizer}
    if impl == "ours":
        from trainwright import GRPOConfig, GRPOTrainer

        return GRPOTrainer(args=GRPOConfig(**settings), environment_factory=CalculatorEnv, **common)
    if impl == "trl":
        import os

        import trl

        os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
        args = trl.GRPOConfig(**settings, gradient_checkpointing=False)
        return trl.GRPOTrainer(args=args, environment_factory=CalculatorEnv, **common)
    raise ValueError(f"impl must be 'ours' or 'trl', got {impl!r}")


def run(
    impl: str, size: str, steps: int, workdir: str, extra: list[str] | None = None, instrument: Any = None
) -> dict[str, Any]:
    """One measurement: median seconds per optimiser step (warm-up excluded), the mean tool calls per
    rollout, ``generate`` calls and the mean sampled tokens per completion."""
    import torch

    torch.set_num_threads(1)
    if steps <= WARMUP_STEPS:
        raise ValueError(f"steps must exceed the {WARMUP_STEPS} warm-up steps, got {steps}")
    flags = [f"--{mode}-rollouts" for mode in ROLLOUTS]
    rollouts = next((mode for mode, flag in zip(ROLLOUTS, flags) if flag in (extra or [])), "lengths")
    trainer = build(impl, size, _common(steps, workdir, max_len=48), rollouts=rollouts)
    timing = timed_train(trainer, instrument)
    logs = trainer.state.log_history
    return {
        **timing,
        "tool_calls_per_rollout": statistics.mean(
            log["tools/call_frequency"] for log in logs if "tools/call_frequency" in log
        ),
        "generate_calls": trainer.model.generate_counter[0],
        "sampled_tokens": statistics.mean(
            log["completions/mean_length"] for log in logs if "completions/mean_length" in log
        ),
    }
