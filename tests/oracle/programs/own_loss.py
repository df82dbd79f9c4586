"""A causal-LM loss written against transformers 4.45 (its own cross-entropy, no num_items_in_batch)."""

import torch.nn.functional as F
from transformers import Trainer


class OwnLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        logits, labels = outputs.logits[:, :-1], inputs["labels"][:, 1:]
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        return (loss, outputs) if return_outputs else loss
