"""TW201: a tracker run opened before `super()._inner_training_loop()` and closed after it (here a file
standing for the tracker). The move opens it at `on_train_begin` and closes it at `on_train_end`; the
code reads only `args`, which a resume does not change (code reading `self.state` does not move: a resume
restores it between the two)."""

import json
import os

from transformers import Trainer


class TrackedTrainer(Trainer):
    def _inner_training_loop(self, *args, **kwargs):
        with open(os.path.join(self.args.output_dir, "run.json"), "w") as f:
            json.dump({"lr": self.args.learning_rate, "status": "open"}, f)
        result = super()._inner_training_loop(*args, **kwargs)
        with open(os.path.join(self.args.output_dir, "run.json"), "a") as f:
            f.write("closed\n")
        return result
