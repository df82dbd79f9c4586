"""TW201: a micro-batch counter kept on the trainer and a print gated on it, after `super().training_step()`.
Nothing else reads the counter, so it moves with the print and counts the same micro-batches, at GA 2 too."""

from transformers import Trainer


class MicroBatchCounterTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.micro_batches = 0

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        self.micro_batches += 1
        if self.micro_batches % 3 == 0:
            print("micro-batches", self.micro_batches, "at step", self.state.global_step)
        return loss
