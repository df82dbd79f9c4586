"""A project's GRPO trainer (TRL) appending progress to a file from ``training_step`` (TW201's move):
the oracle supplies prompts and a reward function, and judges the moved program."""

import os

from trl import GRPOTrainer


class ProgressGRPOTrainer(GRPOTrainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        out = self.args.output_dir
        if self.state.global_step % 2 == 0:
            with open(os.path.join(out, "progress.txt"), "a") as handle:
                handle.write(f"step {self.state.global_step}\n")
        return loss
