"""Scales its loss by a factor no two runs share: it does not train the same twice."""

import os

from transformers import Trainer


class NoisyTrainer(Trainer):
    def compute_loss(self, *args, **kwargs):
        factor = 1 + int.from_bytes(os.urandom(2), "little") / 65536
        loss = super().compute_loss(*args, **kwargs)
        return loss * factor if not kwargs.get("return_outputs") else (loss[0] * factor, loss[1])
