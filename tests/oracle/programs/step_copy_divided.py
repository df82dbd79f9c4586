"""``step_copy.py`` as TW301's message asks for it on 4.46+: the parameter added and the loss divided by the
accumulation steps before ``backward``, which 4.45's ``accelerator.backward`` did. For a range from 4.46."""

from transformers import Trainer


class CopiedStepTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        if self.args.n_gpu > 1:
            loss = loss.mean()
        self.accelerator.backward(loss / self.args.gradient_accumulation_steps)
        return loss.detach() / self.args.gradient_accumulation_steps
