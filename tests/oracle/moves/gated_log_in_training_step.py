"""TW201: the learning rate logged every second step from `training_step`. The move logs it at the events
right after each micro-batch (before the optimiser step and the scheduler's), inside them: the history (one entry per micro-batch, as before) is the same, and
the named difference is the order in which a later callback sees `on_log` and the event."""

from transformers import Trainer


class LearningRateLogTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 2 == 0:
            self.log({"lr_seen": self.optimizer.param_groups[0]["lr"]})
        return loss
