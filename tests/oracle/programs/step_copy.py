"""A ``training_step(self, model, inputs)`` copied from 4.45 rather than extended (no ``super()``): it leaves
the division by the accumulation steps to ``accelerator.backward``, as 4.45 and earlier did. From 4.46 the
Trainer passes it ``num_items_in_batch`` and no longer has accelerate divide: TW301's fix makes it run there,
and with twice the gradient at 2 accumulation steps."""

from transformers import Trainer


class CopiedStepTrainer(Trainer):
    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        if self.args.n_gpu > 1:
            loss = loss.mean()
        self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps
