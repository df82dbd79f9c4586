"""Imports names transformers 5.24.0 and TRL 1.16.0 lack, and never uses them while training."""

from transformers import Trainer
from transformers.deepspeed import is_deepspeed_zero3_enabled  # gone in 5.x
from transformers.trainer_utils import EvaluationStrategy  # gone in 5.x
from trl.import_utils import is_peft_available  # gone in TRL 1.x: answered for this machine

PEFT = is_peft_available()


class StandInTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.args.eval_strategy == "never":  # never true: the stand-ins stay untouched
            print(EvaluationStrategy.NO, is_deepspeed_zero3_enabled())
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
