"""TW202: a print before `super().training_step()` (standing for `torch.cuda.empty_cache()`, which the CPU
cannot show) and a check of the loss it returns after it. No event receives a micro-batch's loss, so the
check stays in the override; the print moves alone, to the events before each micro-batch
(`on_step_begin`, then `on_substep_end`), where it sees the same step number as often."""

import torch
from transformers import Trainer


class CheckedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        print("clearing the cache before step", self.state.global_step)
        loss = super().training_step(model, inputs, num_items_in_batch)
        if torch.isnan(loss):
            print("nan loss at step", self.state.global_step)
        return loss
