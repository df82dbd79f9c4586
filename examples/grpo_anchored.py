#!/usr/bin/env python
"""Customising GRPOTrainer the public way: a subclass that keeps the policy near its starting weights.

    python examples/grpo_anchored.py [--steps 30] [--anchor-weight 0.05] [--out grpo_anchored_output]

A TRL script often subclasses ``GRPOTrainer`` and overrides a private hook (``_compute_loss``,
``_generate_and_score_completions``, ``_calculate_rewards``). trainwright's trainer never calls those, so
such an override would do nothing; it warns at construction (``UnusedTRLOverrideWarning``) and names
the public hook instead. This example is the public version of a common customisation: an extra loss term.

``AnchoredGRPOTrainer`` adds an L2 pull toward the initial weights θ₀ to the GRPO loss,

    loss = L_GRPO + λ · Σᵢ (θᵢ − θ₀ᵢ)²

("L2-SP", Li, Grandvalet & Davoudi 2018, *Explicit Inductive Bias for Transfer Learning with
Convolutional Networks*). It is a cheap stand-in for GRPO's KL penalty (``beta``) when no reference
model fits in memory: it needs one copy of the weights, no second forward. It overrides two public
methods only:

* ``compute_loss(model, inputs, return_outputs, num_items_in_batch)``: the GRPO loss of a micro-batch,
  plus the penalty (the Trainer divides both by gradient accumulation, so an optimiser step gets λ once);
* ``log(logs, start_time)``: adds ``anchor/distance`` (‖θ − θ₀‖) to every log line.

It trains the toy of ``examples/grpo_toy.py`` (reward: the share of "a" in the answer) on CPU in seconds,
prints the reward and the distance per logging step and saves the reward curve as a PNG.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from datasets import Dataset
from grpo_toy import QUESTIONS, fraction_of_a, save_curve
from transformers import PrinterCallback

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer


class AnchoredGRPOTrainer(GRPOTrainer):
    """GRPO with an L2 penalty λ‖θ − θ₀‖² toward the weights the run started from (see the module docstring).

    Why a subclass and not a reward: the penalty is on the weights, not on the sampled text, so it belongs
    in the loss; ``compute_loss`` is the public hook for that on both TRL's and trainwright's trainer.
    """

    def __init__(self, *args: Any, anchor_weight: float = 0.05, **kwargs: Any) -> None:
        if anchor_weight < 0:
            raise ValueError(f"anchor_weight must be >= 0, got {anchor_weight}")
        super().__init__(*args, **kwargs)
        self.anchor_weight = anchor_weight
        # θ₀ of the trainable weights only (an adapter's, under peft_config=), copied once
        self.anchor = {
            name: param.detach().clone()
            for name, param in self.model.named_parameters()
            if param.requires_grad
        }

    def anchor_distance(self, model: torch.nn.Module) -> torch.Tensor:
        """Σ (θ − θ₀)² over the anchored weights of ``model`` (differentiable)."""
        unwrapped = self.accelerator.unwrap_model(model)
        terms = [
            (param - self.anchor[name]).pow(2).sum()
            for name, param in unwrapped.named_parameters()
            if name in self.anchor
        ]
        return torch.stack(terms).sum()

    def compute_loss(
        self,
        model: torch.nn.Module,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if self.anchor_weight == 0 or not model.training:
            return loss
        return loss + self.anchor_weight * self.anchor_distance(model)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        with torch.no_grad():
            logs["anchor/distance"] = self.anchor_distance(self.model).sqrt().item()
        super().log(logs, start_time)


def train(steps: int, anchor_weight: float, out: Path) -> list[dict[str, float]]:
    """Train the toy with the anchored trainer; returns the log lines that carry a reward."""
    torch.set_num_threads(1)  # tiny models run faster on one thread
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer)
    prompts = [[{"role": "user", "content": f"{q} ({i})"}] for i in range(32) for q in QUESTIONS]
    config = GRPOConfig(
        output_dir=str(out),
        per_device_train_batch_size=16,
        num_generations=8,
        gradient_accumulation_steps=2,
        steps_per_generation=2,
        max_completion_length=8,
        learning_rate=2e-2,
        lr_scheduler_type="constant",
        loss_type="dapo",
        max_steps=steps,
        logging_steps=max(1, steps // 10),
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    trainer = AnchoredGRPOTrainer(
        model,
        fraction_of_a,
        args=config,
        train_dataset=Dataset.from_dict({"prompt": prompts}),
        processing_class=tokenizer,
        anchor_weight=anchor_weight,
    )
    trainer.remove_callback(PrinterCallback)  # the curve is printed below
    trainer.train()
    return [log for log in trainer.state.log_history if "reward" in log]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--anchor-weight", type=float, default=0.05, help="λ of the L2 pull toward θ₀")
    parser.add_argument("--out", type=Path, default=Path("grpo_anchored_output"))
    args = parser.parse_args()
    logs = train(args.steps, args.anchor_weight, args.out)
    print("\nstep  mean reward  ‖θ − θ₀‖")
    for log in logs:
        print(
            f"{log['step']:4d}  {log['reward']:11.3f}  {log['anchor/distance']:8.3f}  {'#' * round(log['reward'] * 40)}"
        )
    png = args.out / "reward_curve.png"
    if save_curve([(log["step"], log["reward"]) for log in logs], png):
        print(f"\nreward curve saved to {png}")


if __name__ == "__main__":
    main()
