# expect: TW201
"""Clearing memory every 50 steps from inside training_step."""

import gc

import torch
from transformers import Trainer


class GcTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 50 == 0:
            gc.collect()
            torch.cuda.empty_cache()
        return loss
