"""The move of `tracker_file_before_dispatch_in_log_copy.py`: the file write in an `on_log` callback."""

import json
import os

from transformers import Trainer, TrainerCallback


class TrackedCopyTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(TrackedCopyTrainerLogCallback(self))

    def log(self, logs, start_time=None):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        output = {**logs, "step": self.state.global_step}
        self.state.log_history.append(output)
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)


class TrackedCopyTrainerLogCallback(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_log(self, args, state, control, logs=None, **kwargs):
        with open(os.path.join(args.output_dir, "tracker.jsonl"), "a") as f:
            f.write(json.dumps(sorted(logs)) + "\n")
