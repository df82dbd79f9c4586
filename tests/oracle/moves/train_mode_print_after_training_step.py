"""TW201: a print gated on the global step after `super().training_step()` that reads what the micro-batch
left behind: the model's mode and its weights. The move runs it right after each micro-batch, before the
optimiser step (`on_substep_end`, then `on_pre_optimizer_step`), where both are as the override saw them.

Placed before the next micro-batch (`on_step_begin` / `on_substep_end`, the move until 2026-12-07) it ran
one micro-batch early: after the evaluation of a step the model is still in `eval()` mode at the next
`on_step_begin` (`training_step` switches it back), so the print said `False` where the override said
`True`. Written from `Trainer.training_step` (`model.train()` first) and `_run_epoch`'s events."""

from transformers import Trainer


class ModeTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 1 == 0:
            weights = sum(float(p.detach().abs().sum()) for p in model.parameters())
            print(
                "after step", self.state.global_step, "training", model.training, "weights", round(weights, 4)
            )
        return loss
