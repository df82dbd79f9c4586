"""Calls a name transformers 5.24.0 lacks inside its own `try`: a path no run on 5.24.0 could take."""

from transformers import Trainer
from transformers.deepspeed import is_deepspeed_zero3_enabled  # gone in 5.x


class StandInTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        try:
            zero3 = is_deepspeed_zero3_enabled()
        except Exception:  # noqa: BLE001 - the point: a swallowed use of a stand-in
            zero3 = False
        assert not zero3
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
