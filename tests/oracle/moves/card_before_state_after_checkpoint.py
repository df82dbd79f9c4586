"""TW202 (TRL's GRPO pattern): a card written into the output folder before the checkpoint and a state file
written into the checkpoint folder after it. The card stays (the checkpoint's push carries it:
``tests/oracle/refused/model_card_before_checkpoint.py``); the state file moves to `on_save` alone."""

import json
import os

from transformers import Trainer
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR


class CardAndStateTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        with open(os.path.join(self.args.output_dir, "CARD.md"), "w") as card:
            card.write(f"trained to step {self.state.global_step}\n")
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            folder = os.path.join(
                self._get_output_dir(trial=trial), f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
            )
            with open(os.path.join(folder, "state.json"), "w") as f:
                json.dump({"step": self.state.global_step}, f)
