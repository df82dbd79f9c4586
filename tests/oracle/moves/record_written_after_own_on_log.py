"""TW201: a copy of `Trainer.log` that fires `on_log` itself and then appends the record it put in
`log_history` to a file in the output folder. At `on_log` that record is `state.log_history[-1]`, the same
object, so the move reads it from there. Recomputing `{**logs, "step": ...}` in the callback would not be
the same: with `disable_tqdm=True`, `PrinterCallback.on_log` pops `total_flos` from `logs` before a
callback added later sees them (the train summary's record)."""

import json
import os

from transformers import Trainer


class JsonlLogTrainer(Trainer):
    def log(self, logs, start_time=None):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        output = {**logs, "step": self.state.global_step}
        self.state.log_history.append(output)
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)
        with open(os.path.join(self.args.output_dir, "log.jsonl"), "a") as f:
            f.write(json.dumps(output) + "\n")
