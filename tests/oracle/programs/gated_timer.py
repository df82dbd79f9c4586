"""A micro-batch timer printed every 2 steps in ``training_step`` (the gated timer of issue 32)."""

import time

from transformers import Trainer


class GatedTimer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        start = time.perf_counter()
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 2 == 0:
            print(f"step took {time.perf_counter() - start:.3f}")
        return loss
