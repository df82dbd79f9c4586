"""TW202: a state file written into the checkpoint folder `_save_checkpoint` has just filled, found as
`_save_checkpoint` finds it: `_get_output_dir(trial)` joined with `checkpoint-{global_step}`. No event
receives `trial`; the Trainer holds it (`train` sets `_trial` before the loop that passes it on)."""

import json
import os

from transformers import Trainer
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR


class TrialFolderTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.is_world_process_zero():
            folder = os.path.join(
                self._get_output_dir(trial=trial), f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
            )
            with open(os.path.join(folder, "extra_state.json"), "w") as f:
                json.dump({"epoch": self.state.epoch}, f)
