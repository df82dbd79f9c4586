"""TW201: a `training_step` copied rather than extended (no `super()` call), with the user's code at its
head (a print gated on the global step) and its tail (a micro-batch counter and a temperature decayed with
it and the step, under an `if`/`else` on the GPU count, as copies of 4.x's `training_step` for Wav2Vec2 do).

The copied statements do the micro-batch's work where `super().training_step()` would: the head moves where
code before the call goes (`on_step_begin`, then `on_substep_end` of the micro-batch before), the tail where
code after it goes (`on_substep_end`, then `on_pre_optimizer_step`), the `if`/`else` whole, its test
evaluated in the callback; the model is the trainer's `model_wrapped`, the one the loop hands
`training_step`. The head prints the temperature the tail set, so a tail run one micro-batch late or early
shows. Written from `Trainer.training_step` and `_run_epoch`'s events."""

from transformers import Trainer


class CopiedStepTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.micro_batches = 0

    def training_step(self, model, inputs, num_items_in_batch=None):
        if self.state.global_step % 2 == 0:
            print("step", self.state.global_step, "temperature", getattr(model, "temperature", None))
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        self.accelerator.backward(loss)

        self.micro_batches += 1
        if self.args.n_gpu > 1:
            model.module.temperature = max(0.5, 0.9 ** (self.state.global_step + self.micro_batches))
        else:
            model.temperature = max(0.5, 0.9 ** (self.state.global_step + self.micro_batches))
        return loss.detach()
