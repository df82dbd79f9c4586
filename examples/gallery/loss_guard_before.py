# expect:
# expect-preview: TW203
"""Stopping on a diverging loss by setting control flags from a log override."""

import math

from transformers import Trainer


class GuardedTrainer(Trainer):
    def log(self, logs, start_time=None):
        if "loss" in logs and not math.isfinite(logs["loss"]):
            self.control.should_save = True
            self.control.should_training_stop = True
        super().log(logs, start_time)
