"""Imports a name transformers 5.24.0 lacks and reads it on every step."""

from transformers import Trainer
from transformers.trainer_utils import EvaluationStrategy  # gone in 5.x


class StandInTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.args.eval_strategy == EvaluationStrategy.NO:
            return 0.0
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
