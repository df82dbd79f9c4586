"""TW201 (gallery `memory_before.py`): gc/cache clearing gated on the global step inside training_step."""

import gc

import torch
from transformers import Trainer


class GcTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 2 == 0:
            gc.collect()
            torch.cuda.empty_cache()
            print("cleared at", self.state.global_step)
        return loss
