"""A copy of `Trainer.log` that appends the logs to a tracker file just before it dispatches `on_log`.

Moved to `on_log`, the callback runs after `PrinterCallback` (`disable_tqdm=True`), whose `on_log` pops
`total_flos` from the same dict: the final record of `train()` reaches the file without it, so **the file
differs**. Registered first it would not, but `add_callback` appends, after the Trainer's own callbacks."""

import json
import os

from transformers import Trainer


class TrackedCopyTrainer(Trainer):
    def log(self, logs, start_time=None):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        output = {**logs, "step": self.state.global_step}
        self.state.log_history.append(output)
        with open(os.path.join(self.args.output_dir, "tracker.jsonl"), "a") as f:
            f.write(json.dumps(sorted(logs)) + "\n")
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)
