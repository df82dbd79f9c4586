# expect: TW202
"""Timing every step by wrapping training_step: the wrapper runs inside the loop's hot path and breaks
whenever training_step's signature changes."""

import time

from transformers import Trainer


class TimedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        start = time.perf_counter()
        loss = super().training_step(model, inputs, num_items_in_batch)
        self.log({"step_time": time.perf_counter() - start})
        return loss
