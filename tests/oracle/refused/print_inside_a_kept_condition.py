"""No move (TW201 wrote one until 2026-12-07): a gated print inside an ``if`` whose test reads a local and
whose block resets what it compares with. The move took the inner ``if`` alone to ``on_step_begin`` /
``on_substep_end`` and dropped the outer condition, so the callback printed on steps where the override
does not; carried into the callback, the test would read another clock at another moment
(``held_condition``). Found through the oracle's run of a test-split move whose original fails on the
asked release; written from scratch, not from that code."""

import time

from transformers import Trainer


class CoolingTrainer(Trainer):
    def __init__(self, *args, cooldown=3600.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.cooldown = cooldown
        self.last_adaptation = time.time()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        now = time.time()
        if now - self.last_adaptation > self.cooldown:
            model.config.use_cache = False
            if self.state.global_step % 2 == 0:
                print("adapted at step", self.state.global_step)
            self.last_adaptation = now
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
