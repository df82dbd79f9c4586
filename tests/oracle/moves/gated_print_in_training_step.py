"""TW201: a print gated on the global step inside training_step; the move puts it in an event."""

from transformers import Trainer


class GatedPrintTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 2 == 0:
            print("at step", self.state.global_step)
        return loss
