"""No move (TW201 wrote one until 2026-12-07): a print gated on the global step after
`super().training_step()` that reads the gradients the micro-batch left. Moved before the next micro-batch
it printed those of the micro-batch before (none at `on_step_begin`, after `zero_grad`); right after it,
the last micro-batch of each step has no event before the Trainer clips the gradients (`max_grad_norm`,
then `on_pre_optimizer_step`), so no callback prints what the override printed. Written from
`_run_epoch`'s order of `training_step`, the clip and the events."""

from transformers import Trainer


class GradTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 1 == 0:
            norm = sum(float(p.grad.abs().sum()) for p in model.parameters() if p.grad is not None)
            print("gradients at step", self.state.global_step, round(norm, 4))
        return loss
