"""After: real events, every event takes **kwargs, and no event returns anything but None/control."""

from transformers import TrainerCallback


class PrintingCallback(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        print("step done")

    def on_log(self, args, state, control, logs=None, **kwargs):
        print(logs)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if metrics["eval_loss"] < 1.0:
            control.should_training_stop = True
