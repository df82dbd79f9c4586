"""``prints_noise.py`` whose fix went wrong: twice the loss."""

import os

from transformers import Trainer


class NoisyTrainer(Trainer):
    def training_step(self, *args, **kwargs):
        print("machine says", os.urandom(4).hex())
        return super().training_step(*args, **kwargs)

    def compute_loss(self, *args, **kwargs):
        loss = super().compute_loss(*args, **kwargs)
        return loss * 2 if not kwargs.get("return_outputs") else (loss[0] * 2, loss[1])
