"""TW202 (gallery `step_timer_before.py`): each step timed by wrapping training_step, the time logged."""

import time

from transformers import Trainer


class TimedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        start = time.perf_counter()
        loss = super().training_step(model, inputs, num_items_in_batch)
        self.log({"step_time": time.perf_counter() - start})
        return loss
