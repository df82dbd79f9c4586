# expect: TW101 TW202 TW302
"""Writing extra files into each checkpoint by overriding the private _save_checkpoint, still passing
the `metrics` argument that 4.47 removed."""

import json
import os

from transformers import Trainer


class ExtrasTrainer(Trainer):
    def _save_checkpoint(self, model, trial, metrics=None):
        super()._save_checkpoint(model, trial, metrics=metrics)
        folder = os.path.join(self.args.output_dir, f"checkpoint-{self.state.global_step}")
        with open(os.path.join(folder, "run_config.json"), "w") as handle:
            json.dump({"lr": self.args.learning_rate}, handle)
