"""TW201: each micro-batch timed around `super().training_step()`, summed, and recorded once per optimiser
step when a micro-batch counter (also read by `compute_loss`, so it stays) reaches the accumulation
boundary; `log` merges the records. The move keeps the counter in the override and times the span."""

import time

from transformers import Trainer


class AccumulatedTimerTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._micro = 0
        self._span = 0.0
        self._records = {"step_time": []}

    def training_step(self, model, inputs, num_items_in_batch=None):
        time_before = time.perf_counter()
        output = super().training_step(model, inputs, num_items_in_batch)
        self._micro += 1
        time_after = time.perf_counter()
        self._span += time_after - time_before
        if self._micro % self.args.gradient_accumulation_steps == 0:
            self._records["step_time"].append(self._span)
            self._span = 0.0
        return output

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self._micro < 0:  # the counter is read where the loss is computed: it stays in the override
            raise RuntimeError("micro-batch counter went negative")
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    def log(self, logs, start_time=None):
        times = self._records["step_time"]
        if times:
            logs["step_time"] = round(sum(times) / len(times), 3)
            times.clear()
        super().log(logs, start_time)
