"""TW202: extra state written into the checkpoint folder just saved, whose path is built in two steps
(`checkpoint_folder`, then `output_dir` from it). The move gathers both definers into `on_save`, which
fires right after `_save_checkpoint` with the same `global_step`, so the file lands in the same folder."""

import json
import os

from transformers import Trainer
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR


class ExtraStateTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        checkpoint_folder = f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        output_dir = os.path.join(self.args.output_dir, checkpoint_folder)
        with open(os.path.join(output_dir, "extra_state.json"), "w") as f:
            json.dump({"step": self.state.global_step, "epoch": self.state.epoch}, f)
