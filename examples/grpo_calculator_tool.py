#!/usr/bin/env python
"""GRPO with tool calling on CPU in under a minute: a tiny model learns to call a calculator tool, once, with
the expression that answers the question.

    python examples/grpo_calculator_tool.py [--steps 40] [--out grpo_calculator_output]

What happens:

1. A tiny Qwen2 and a ChatML tokenizer whose chat template renders tools, tool calls and tool results
   (``trainwright.toy_tools``) are built from a config. A random model never writes a tool call, so the
   model is *nudged*: each possible call is one token, and after the assistant header the model starts
   out choosing about evenly between four calls (``3 + 4``, ``6 * 7``, ...) and ending its turn without
   one. It does not know which call answers "what is six times seven?": that is what it learns.
2. ``environment_factory=CalculatorEnv``: every rollout gets its own (pooled) environment, reset with
   the dataset row. Its public method ``calculator`` is the tool the model sees (schema from the
   signature and docstring); its ``get_reward`` is the reward: 1 for exactly one call with the question's
   expression, 0.25 for using the tool otherwise, 0 for not using it.
3. Only the LM head trains (the randomly initialised body, which carries the nudge, stays frozen), with
   a high learning rate, so that half a minute of CPU is enough.
4. When the model emits a call, the trainer runs the tool, appends the result to the completion and
   lets the model continue (``max_tool_calling_iterations=1``). The result's tokens are in the
   completion but out of the loss (the tool mask).

The reward curve is printed and saved to ``<out>/reward_curve.png``; ``tools/call_frequency`` is logged.
Measured 2026-12-06 on a loaded 2-core machine: 24.7 s wall for the default 24 steps; the mean reward goes
0.45, 0.72, 0.88, 0.95, 0.99, 1.00 (every 4 steps) and the tool calls per rollout 0.77 -> 1.00.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from _progress import add_progress_bar
from datasets import Dataset
from transformers import PrinterCallback

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy_tools import build_tool_model, build_tool_tokenizer, tool_call_text

EXPRESSIONS = ["3 + 4", "6 * 7", "9 - 5", "8 + 8"]  # the calls the model can make, one token each
QUESTIONS = ["What is six times seven?", "Multiply 6 by 7.", "Compute 6 * 7.", "How much is 6 x 7?"]
ANSWER = "6 * 7"  # every question asks this; the model must learn which of its calls computes it


def evaluate(expression: str) -> int:
    """``a op b`` for two integers and one of + - * (no ``eval``: the model writes the expression)."""
    left, op, right = expression.split()
    a, b = int(left), int(right)
    return {"+": a + b, "-": a - b, "*": a * b}[op]


class CalculatorEnv:
    """One rollout's environment: remembers the question's expression and the calculator calls made."""

    def reset(self, expression: str, **row) -> None:
        self.expression = expression
        self.calls: list[str] = []

    def calculator(self, expression: str) -> int:
        """Evaluate an arithmetic expression of two integers.

        Args:
            expression: The expression, for example "3 + 4".
        """
        self.calls.append(expression)
        return evaluate(expression)

    def get_reward(self) -> float:
        """1 for exactly one call with the question's expression, 0.25 for using the tool otherwise (calling
        every expression at once must not pay), 0 for answering without it."""
        if self.calls == [self.expression]:
            return 1.0
        return 0.25 if self.calls else 0.0


def build_model(tokenizer):
    """The nudged model: after the assistant header every call token and EOS get logit 6, a call ends the
    turn (logit 16); everything else about the model is random."""
    calls = [tool_call_text("calculator", {"expression": e}) for e in EXPRESSIONS]
    start = {call: 6.0 for call in calls} | {"<|im_end|>": 6.0}
    transitions = {"assistant\n": start} | {call: {"<|im_end|>": 16.0} for call in calls}
    return build_tool_model(tokenizer, transitions, hidden_size=64, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--out", type=Path, default=Path("grpo_calculator_output"))
    args = parser.parse_args()
    torch.set_num_threads(1)

    tokenizer = build_tool_tokenizer([tool_call_text("calculator", {"expression": e}) for e in EXPRESSIONS])
    model = build_model(tokenizer)
    model.model.requires_grad_(False)  # train the LM head only: the nudge lives in the body, keep it intact
    questions = [q for _ in range(16) for q in QUESTIONS]
    dataset = Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": q}] for q in questions],
            "expression": [ANSWER] * len(questions),
        }
    )
    config = GRPOConfig(
        output_dir=str(args.out),
        per_device_train_batch_size=16,  # completions per micro-step: 2 questions x G
        num_generations=8,
        max_completion_length=16,  # room for one call, its result and a short continuation
        max_tool_calling_iterations=1,
        learning_rate=3e-2,
        lr_scheduler_type="constant",
        max_steps=args.steps,
        logging_steps=4,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model,
        reward_funcs=None,  # the environment's get_reward scores each rollout
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=CalculatorEnv,
    )
    trainer.remove_callback(PrinterCallback)
    add_progress_bar(trainer)
    trainer.train()

    curve = [
        (log["step"], log["reward"], log["tools/call_frequency"])
        for log in trainer.state.log_history
        if "reward" in log
    ]
    print("\nstep  reward  calls/rollout")
    for step, reward, calls in curve:
        print(f"{step:4d}  {reward:.3f}   {calls:.2f}  {'#' * round(reward * 40)}")
    save_curve(curve, args.out / "reward_curve.png")


def save_curve(curve: list[tuple[int, float, float]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([s for s, _, _ in curve], [r for _, r, _ in curve], marker="o", label="reward (right call)")
    ax.plot([s for s, _, _ in curve], [c for _, _, c in curve], marker=".", label="tool calls per rollout")
    ax.set_xlabel("optimiser step")
    ax.set_ylim(0, 1.05)
    ax.set_title("GRPO with a calculator tool on a tiny model")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=120)
    print(f"\nreward curve saved to {png}")


if __name__ == "__main__":
    main()
