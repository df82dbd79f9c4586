#!/usr/bin/env python
"""Tool-calling GRPO benchmark: ours vs TRL with ``environment_factory=`` (used by ``trainers_vs_trl.py grpo_tools``).

    python benchmarks/trainers_vs_trl.py grpo_tools --sizes tiny,small --repeats 3 [--sampled-rollouts]

Equal settings on both sides: the nudged tool-calling toy model of ``trainwright.toy_tools`` (below), the
calculator environment of ``examples/grpo_calculator_tool.py``,
``max_tool_calling_iterations=2``, ``max_completion_length=48``, and otherwise ``bench_grpo``'s settings
(per-device batch 8, G=4, GA 2 = steps_per_generation, dapo, beta 0, fp32, AdamW). The tokenizer gets
trainwright's ChatML response template on both sides (TRL only knows the templates it ships).
``sec_per_step`` is the median wall time per optimiser step after the warm-up steps.

Same rollouts by default: the nudge is deterministic (every rollout calls ``6 * 7`` at each of its two
tool turns, then the turn limit ends it), so both libraries generate the same tokens, make the same tool
calls and train on the same sequences, and the ratio measures the trainers. With ``--sampled-rollouts``
the nudge leaves a choice (a call or the end of the turn, about evenly) and each library samples with
its own random draws: the two sides then make different numbers of tool calls, and a tool call costs a
whole turn (another ``generate`` call, a longer sequence to score), so that ratio mostly measures the
sampled text (rounds mix one-turn and multi-turn rollouts). ``tool_calls_per_rollout``,
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


def build(impl: str, size: str, settings: dict[str, Any], same_rollouts: bool = False) -> Any:
    """A tool-calling trainer of ``impl`` ("ours" or "trl") on the nudged toy model of ``size``."""
    from datasets import Dataset

    from trainwright.toy_tools import build_tool_model, build_tool_tokenizer, tool_call_text
    from trainwright.trainers.grpo_tool_chat import CHATML_TOOL_RESPONSE_TEMPLATE

    calls = [tool_call_text("calculator", {"expression": e}) for e in EXPRESSIONS]
    tokenizer = build_tool_tokenizer(calls)
    tokenizer.response_template = dict(CHATML_TOOL_RESPONSE_TEMPLATE)
    transitions = {"assistant\n": {call: 6.0 for call in calls} | {"<|im_end|>": 6.0}}
    transitions |= {call: {"<|im_end|>": 8.0} for call in calls}
    if same_rollouts:  # logits 16: both libraries make the same calls whatever their random draws (default)
        transitions = {"assistant\n": {calls[1]: 16.0}, calls[1]: {"<|im_end|>": 16.0}}
    shape = SIZES[size]
    model = build_tool_model(tokenizer, transitions, hidden_size=max(64, shape["hidden_size"]), seed=0)
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
    same = "--sampled-rollouts" not in (extra or [])
    trainer = build(impl, size, _common(steps, workdir, max_len=48), same_rollouts=same)
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
