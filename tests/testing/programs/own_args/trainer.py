"""A Trainer reading fields of the project's own `TrainingArguments` (defined in `train.py`)."""

from transformers import Trainer


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        scale = self.args.loss_weight * self.args.max_new_tokens / 8  # 1.0 with the project's defaults
        return (loss[0] * scale, loss[1]) if return_outputs else loss * scale
