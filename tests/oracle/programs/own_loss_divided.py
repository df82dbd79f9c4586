"""``own_loss.py`` as TW301's note asks it to be fixed: it accepts ``num_items_in_batch`` and, when
the Trainer passes it (and so stops dividing), divides by the accumulation steps itself."""

import torch.nn.functional as F
from transformers import Trainer


class OwnLossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        logits, labels = outputs.logits[:, :-1], inputs["labels"][:, 1:]
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))
        if num_items_in_batch is not None:
            loss = loss / self.args.gradient_accumulation_steps
        return (loss, outputs) if return_outputs else loss
