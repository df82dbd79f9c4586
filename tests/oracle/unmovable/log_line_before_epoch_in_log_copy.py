"""A copy of `Trainer.log` that prints the logs it was given before it adds `epoch` to them.

Moved to `on_log`, the line is printed after the copy has added `epoch` (and after `PrinterCallback`
popped `total_flos`): **the printed lines differ**. No event sees `logs` as the method received them."""

from transformers import Trainer


class LineFirstTrainer(Trainer):
    def log(self, logs, start_time=None):
        print(f"raw logs at step {self.state.global_step}: {sorted(logs)}")
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        output = {**logs, "step": self.state.global_step}
        self.state.log_history.append(output)
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)
