"""After: the same weighted loss, with the signature every 4.46+ release calls, and the
gradient-accumulation contract declared (the loss is a per-batch mean, so let the Trainer scale it)."""

import torch
from transformers import Trainer


class WeightedLossTrainer(Trainer):
    loss_is_scaled_for_ga = False  # a mean over this micro-batch: the Trainer divides by the GA steps

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weights = torch.tensor([1.0, 3.0], device=outputs.logits.device)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weights)
        return (loss, outputs) if return_outputs else loss
