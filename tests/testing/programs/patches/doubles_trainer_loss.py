"""Patches the library at import, as some projects do: every Trainer's loss doubled, in this program.

The oracle's child trains many programs in turn; this one must not change the ones after it."""

import transformers

_stock = transformers.Trainer.compute_loss


def _doubled(self, model, inputs, return_outputs=False, num_items_in_batch=None):
    out = _stock(self, model, inputs, return_outputs, num_items_in_batch)
    return (out[0] * 2, out[1]) if return_outputs else out * 2


transformers.Trainer.compute_loss = _doubled
transformers.Trainer.oracle_added_by_a_patch = lambda self: None


class DoublingTrainer(transformers.Trainer):
    """Inherits the patched loss."""
