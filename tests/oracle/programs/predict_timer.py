"""A timer around ``super().prediction_step()``: no callback event begins a prediction step."""

import time

from transformers import Trainer


class EvalTimer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        start = time.time()
        out = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)
        print(time.time() - start)
        return out
