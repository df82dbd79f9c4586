"""As `unused.py`, with a loss twice as large: a planted difference behind the stand-ins."""

from transformers import Trainer
from transformers.deepspeed import is_deepspeed_zero3_enabled  # gone in 5.x
from transformers.trainer_utils import EvaluationStrategy  # gone in 5.x
from trl.import_utils import is_peft_available  # gone in TRL 1.x: answered for this machine

PEFT = is_peft_available()


class StandInTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.args.eval_strategy == "never":  # never true: the stand-ins stay untouched
            print(EvaluationStrategy.NO, is_deepspeed_zero3_enabled())
        loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        return (loss[0] * 2, loss[1]) if return_outputs else loss * 2
