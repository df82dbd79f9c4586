"""The move of `log_line_before_epoch_in_log_copy.py`: the print in an `on_log` callback, the copy's
other statements left as they were."""

from transformers import Trainer, TrainerCallback


class LineFirstTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(LineFirstTrainerLogCallback(self))

    def log(self, logs, start_time=None):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        output = {**logs, "step": self.state.global_step}
        self.state.log_history.append(output)
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)


class LineFirstTrainerLogCallback(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_log(self, args, state, control, logs=None, **kwargs):
        print(f"raw logs at step {state.global_step}: {sorted(logs)}")
