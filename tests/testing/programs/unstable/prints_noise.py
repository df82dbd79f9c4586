"""Prints, each step, what no two runs share (as a printed CPU load): the oracle cannot compare it."""

import os

from transformers import Trainer


class NoisyTrainer(Trainer):
    def training_step(self, *args, **kwargs):
        print("machine says", os.urandom(4).hex())
        return super().training_step(*args, **kwargs)
