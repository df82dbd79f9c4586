"""A 4.45-era ``compute_loss`` that logs and returns ``super()``'s loss: TW301's fix forwards
``num_items_in_batch`` to ``super()``, which keeps the Trainer's own scaling."""

from transformers import Trainer


class SuperLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        print("tokens in batch", int(inputs["attention_mask"].sum()))
        return super().compute_loss(model, inputs, return_outputs)
