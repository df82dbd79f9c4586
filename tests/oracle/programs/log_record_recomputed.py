"""The copy of `Trainer.log` of `tests/oracle/moves/record_written_after_own_on_log.py`, its file written
by a callback that rebuilds the record from the `logs` it receives. `PrinterCallback` (the oracle trains
with `disable_tqdm=True`) has popped `total_flos` from them by then: the train summary's line in
`log.jsonl` lacks it, and the oracle must say so."""

import json
import os

from transformers import Trainer, TrainerCallback


class RebuiltRecordCallback(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_log(self, args, state, control, logs=None, **kwargs):
        output = {**logs, "step": state.global_step}
        with open(os.path.join(args.output_dir, "log.jsonl"), "a") as f:
            f.write(json.dumps(output) + "\n")


class JsonlLogTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(RebuiltRecordCallback(self))

    def log(self, logs, start_time=None):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        output = {**logs, "step": self.state.global_step}
        self.state.log_history.append(output)
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)
