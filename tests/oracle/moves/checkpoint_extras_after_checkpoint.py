"""TW202 (gallery `checkpoint_extras_before.py`): a file written into each checkpoint folder, the folder
read into a local first."""

import json
import os

from transformers import Trainer


class ExtrasTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        folder = os.path.join(self.args.output_dir, f"checkpoint-{self.state.global_step}")
        with open(os.path.join(folder, "run_config.json"), "w") as handle:
            json.dump({"lr": self.args.learning_rate}, handle)
