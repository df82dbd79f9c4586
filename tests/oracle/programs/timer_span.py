"""``base.py`` with its micro-batch timer moved to ``on_step_begin``/``on_step_end``: it now measures
the whole optimiser step (every micro-batch and the optimiser), once per step."""

import time

from base import ReferenceTrainer as _Base
from transformers import TrainerCallback


class ReferenceTrainer(_Base):
    def training_step(self, model, inputs, num_items_in_batch=None):
        return super(_Base, self).training_step(model, inputs, num_items_in_batch)


class StepTimerCallback(TrainerCallback):
    def on_step_begin(self, args, state, control, **kwargs):
        self.start = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        print(f"micro-batch took {time.perf_counter() - self.start:.3f}s")
