# expect: TW201
"""Appending progress to a file every N steps from inside training_step, with the interval kept on
the Trainer: file output in the loop's hot path, which has nothing to do with computing the loss."""

import os

from transformers import Trainer


class ProgressTrainer(Trainer):
    def __init__(self, *args, log_every=10, **kwargs):
        super().__init__(*args, **kwargs)
        self.log_every = log_every

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        out = self.args.output_dir
        if self.state.global_step % self.log_every == 0:
            with open(os.path.join(out, "progress.txt"), "a") as handle:
                handle.write(f"step {self.state.global_step} epoch {self.state.epoch}\n")
        return loss
