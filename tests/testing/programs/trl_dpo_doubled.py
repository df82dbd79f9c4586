"""``trl_dpo.py`` with a planted difference: the loss doubled (the oracle must report it)."""

from trl import DPOTrainer


class ProjectDPOTrainer(DPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print(f"train data: {type(self.train_dataset).__name__}")

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        return (2 * loss[0], *loss[1:]) if return_outputs else 2 * loss
