"""No move (was TW202 until 2026-12-06; TRL's pattern): a file written into the output folder before the
checkpoint. `_save_checkpoint` pushes that folder to the Hub inside the call when `push_to_hub` is set
(`_push_from_checkpoint`), so the card goes up with the checkpoint; at `on_save` the upload is already
under way. The oracle never pushes, so it found the old move equal; the push is what it could not see."""

import os

from transformers import Trainer


class CardTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        with open(os.path.join(self.args.output_dir, "CARD.md"), "w") as f:
            f.write(f"trained to step {self.state.global_step}\n")
        super()._save_checkpoint(model, trial)
