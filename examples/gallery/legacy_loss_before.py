# expect: TW301
"""A custom loss written against transformers 4.45: since 4.46 the Trainer passes num_items_in_batch and
this override fails with "compute_loss() got an unexpected keyword argument 'num_items_in_batch'"."""

import torch
from transformers import Trainer


class WeightedLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weights = torch.tensor([1.0, 3.0], device=outputs.logits.device)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weights)
        return (loss, outputs) if return_outputs else loss
