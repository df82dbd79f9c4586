"""TW202: a card written after each checkpoint, its name chosen by an `if`/`else` of pure assignments
(the hub id's last part, else the output folder's name). The move recomputes the name at `on_save`.
(Written before the checkpoint, the card would go up with its push; at `on_save` the upload is under way:
no move, ``tests/oracle/refused/model_card_before_checkpoint.py``.)"""

import os
from pathlib import Path

from transformers import Trainer


class NamedCardTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.args.hub_model_id is None:
            card_name = Path(self.args.output_dir).name
        else:
            card_name = self.args.hub_model_id.split("/")[-1]
        with open(os.path.join(self.args.output_dir, "CARD.md"), "w") as f:
            f.write(f"# {card_name}\ntrained to step {self.state.global_step}\n")
