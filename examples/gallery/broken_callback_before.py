# expect: TW401 TW402 TW403
"""A callback with an event that does not exist, an event that cannot take the handler's keyword
arguments, and an event that returns a bool (which replaces `control` for every later callback)."""

from transformers import TrainerCallback


class PrintingCallback(TrainerCallback):
    def on_batch_end(self, args, state, control, **kwargs):
        print("batch done")

    def on_log(self, args, state, control, logs=None):
        print(logs)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        return metrics["eval_loss"] < 1.0
