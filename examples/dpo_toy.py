#!/usr/bin/env python
"""DPO on a toy preference task, on CPU, in well under a minute: watch rewards/accuracies climb.

    python examples/dpo_toy.py [--steps 120] [--loss sigmoid]

The task: a question "is <thing> hot?" in chat format; the preferred reply is "yes" for hot things and
"no" for cold ones. The answer depends on the prompt, so the model must read it: always preferring
one word scores 0.5. Everything is built offline: a byte-level BPE tokenizer with a ChatML template
and a ~60k-parameter Qwen2 from a config (no download). The reference model is a frozen copy of the
policy, made by the trainer.

What to look at in the printout:
* ``rewards/accuracies``: fraction of pairs where β·log(π/π_ref) is higher for the chosen reply;
  it starts at 0 (policy == reference, all rewards equal) and should pass 0.9 on held-out prompts;
* ``rewards/margins``: the mean reward gap, which should grow;
* ``loss``: starts at ln 2 = 0.693 for the sigmoid loss.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from _progress import add_progress_bar
from datasets import Dataset, disable_progress_bars
from tqdm.auto import tqdm
from transformers import PrinterCallback, TrainerCallback

from trainwright import DPOConfig, DPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

HOT = ["fire", "sun", "lava", "oven", "stove", "coffee", "flame", "desert"]
COLD = ["ice", "snow", "frost", "winter", "glacier", "freezer", "hail", "arctic"]


def preference_set(n: int, seed: int) -> Dataset:
    """Conversational pairs: prompt = one user message, chosen/rejected = one assistant message each."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        hot = rng.random() < 0.5
        thing = rng.choice(HOT if hot else COLD)
        good, bad = ("yes", "no") if hot else ("no", "yes")
        rows.append(
            {
                "prompt": [{"role": "user", "content": f"Q{rng.randint(0, 999)}: is {thing} hot?"}],
                "chosen": [{"role": "assistant", "content": good}],
                "rejected": [{"role": "assistant", "content": bad}],
            }
        )
    return Dataset.from_list(rows)


class PrintMetrics(TrainerCallback):
    """One line per log: the numbers a DPO run is judged by."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            tqdm.write(  # prints above the progress bar instead of through it
                f"step {state.global_step:4d}  loss {logs['loss']:.4f}  "
                f"rewards/accuracies {logs['rewards/accuracies']:.2f}  rewards/margins {logs['rewards/margins']:+.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--loss", default="sigmoid", help="any DPOConfig.loss_type, e.g. ipo, hinge, simpo")
    opts = parser.parse_args()

    torch.set_num_threads(1)  # tiny models run several times faster on one thread
    disable_progress_bars()
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=64)
    with tempfile.TemporaryDirectory() as out:
        args = DPOConfig(
            output_dir=out,
            loss_type=opts.loss,
            beta=0.1,
            learning_rate=3e-3,
            lr_scheduler_type="constant",
            per_device_train_batch_size=8,
            max_steps=opts.steps,
            logging_steps=10,
            save_strategy="no",
            report_to="none",
            use_cpu=True,
            disable_tqdm=True,
        )
        trainer = DPOTrainer(
            model,
            args=args,
            train_dataset=preference_set(512, seed=0),
            eval_dataset=preference_set(64, seed=1),
            processing_class=tokenizer,
            callbacks=[PrintMetrics()],
        )
        trainer.remove_callback(PrinterCallback)  # our one-line summary replaces the raw log dicts
        add_progress_bar(trainer)
        before = trainer.evaluate()
        trainer.train()
        after = trainer.evaluate()
    print(
        f"held-out rewards/accuracies: {before['eval_rewards/accuracies']:.2f} -> {after['eval_rewards/accuracies']:.2f}"
        f"  (margins {before['eval_rewards/margins']:+.3f} -> {after['eval_rewards/margins']:+.3f})"
    )


if __name__ == "__main__":
    main()
