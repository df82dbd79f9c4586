"""``base.py`` with its own cross-entropy in a ``compute_loss`` that accepts (and ignores)
``num_items_in_batch``: the Trainer then stops dividing the loss by the accumulation steps."""

import torch.nn.functional as F
from base import ReferenceTrainer as _Base


class ReferenceTrainer(_Base):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        logits, labels = outputs.logits[:, :-1], inputs["labels"][:, 1:]
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        return (loss, outputs) if return_outputs else loss
