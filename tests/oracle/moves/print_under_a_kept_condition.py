"""TW201: a print gated on the step inside an ``if`` whose other statement stays in the override (it
changes the model). The move carries the condition into the callback (``held_condition``): it reads only
``self.args``, which nothing in the override writes, so the event tests it alike."""

from transformers import Trainer


class SeededTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.args.seed == 42:
            model.config.use_cache = False
            if self.state.global_step % 2 == 0:
                print("seeded at step", self.state.global_step)
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
