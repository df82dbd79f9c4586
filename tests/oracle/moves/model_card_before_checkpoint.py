"""TW202 (TRL's pattern): a file written before the checkpoint; the move writes it at `on_save`, after."""

import os

from transformers import Trainer


class CardTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        with open(os.path.join(self.args.output_dir, "CARD.md"), "w") as f:
            f.write(f"trained to step {self.state.global_step}\n")
        super()._save_checkpoint(model, trial)
