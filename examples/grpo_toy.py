#!/usr/bin/env python
"""GRPO on CPU in under a minute: a tiny random model learns to answer with the letter "a".

    python examples/grpo_toy.py [--steps 60] [--out grpo_toy_output]

What happens:

1. A 2-layer Qwen2 (~37k parameters) is built from a config (nothing is downloaded), with a byte-level
   BPE tokenizer and a ChatML chat template.
2. The prompts are conversations (``[{"role": "user", "content": ...}]``), so they go through the chat
   template; the completions reach the reward function as ``[{"role": "assistant", "content": ...}]``,
   exactly as TRL passes them.
3. The reward is the fraction of "a" characters in the answer. Each prompt gets G=8 samples; GRPO
   pushes up the samples that beat their group's mean.
4. One ``generate`` call serves 2 micro-steps (``steps_per_generation=2``), and the completions table
   goes to ``<out>/completions.jsonl``.

The reward curve is printed and saved to ``<out>/reward_curve.png`` (when matplotlib is installed;
without it the run says so and finishes).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from _progress import add_progress_bar
from datasets import Dataset
from transformers import PrinterCallback

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

QUESTIONS = ["What is your favourite letter?", "Say something.", "Answer briefly.", "Hello!"]


def fraction_of_a(completions: list, **kwargs) -> list[float]:
    """Reward: share of the answer's characters that are "a" (0 for an empty answer)."""
    texts = [completion[0]["content"] for completion in completions]
    return [text.count("a") / len(text) if text else 0.0 for text in texts]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--out", type=Path, default=Path("grpo_toy_output"))
    args = parser.parse_args()
    torch.set_num_threads(1)  # tiny models run faster on one thread

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer)
    prompts = [[{"role": "user", "content": f"{q} ({i})"}] for i in range(32) for q in QUESTIONS]
    dataset = Dataset.from_dict({"prompt": prompts})

    config = GRPOConfig(
        output_dir=str(args.out),
        per_device_train_batch_size=16,  # completions per micro-step
        num_generations=8,  # G: completions per prompt
        gradient_accumulation_steps=2,
        steps_per_generation=2,  # one generate call per optimiser step here
        max_completion_length=8,
        learning_rate=2e-2,
        lr_scheduler_type="constant",
        loss_type="dapo",
        max_steps=args.steps,
        logging_steps=5,
        log_completions=True,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model, fraction_of_a, args=config, train_dataset=dataset, processing_class=tokenizer
    )
    trainer.remove_callback(PrinterCallback)  # we print our own curve below
    add_progress_bar(trainer)
    trainer.train()

    curve = [(log["step"], log["reward"]) for log in trainer.state.log_history if "reward" in log]
    print("\nstep  mean reward")
    for step, reward in curve:
        print(f"{step:4d}  {reward:.3f}  {'#' * round(reward * 40)}")
    last = [
        json.loads(line) for line in (args.out / "completions.jsonl").read_text(encoding="utf-8").splitlines()
    ][-3:]
    print("\nlast completions:")
    for row in last:
        prompt, completion = row["prompt"][0]["content"], row["completion"][0]["content"]
        print(f"  {prompt!r} -> {completion!r}  reward {row['rewards']}")

    png = args.out / "reward_curve.png"
    plotted = save_curve(curve, png)
    calls = trainer.generation_backend.calls
    where = f"reward curve saved to {png}" if plotted else "reward curve printed above"
    print(f"\n{where}; {calls} generate calls for {args.steps} steps")


def save_curve(curve: list[tuple[int, float]], png: Path) -> bool:
    """Plot the curve to ``png``; without matplotlib (an optional extra) say so and go on: the run has
    already trained and the curve is printed, so a missing plotting library must not end it in a
    traceback."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\nmatplotlib is not installed, so no reward_curve.png (pip install matplotlib to get it)")
        return False
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([s for s, _ in curve], [r for _, r in curve], marker="o")
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("mean reward (fraction of 'a')")
    ax.set_ylim(0, 1.05)
    ax.set_title("GRPO on a 37k-parameter toy model")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    return True


if __name__ == "__main__":
    main()
