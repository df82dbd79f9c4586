"""TW202: one more history entry logged after `super().evaluate()`. The move logs it from `on_evaluate`,
inside that event: the history is the same, and a callback added after the moved one sees this `on_log`
before `on_evaluate`, which the move names and the oracle checks is the only change."""

from transformers import Trainer


class EpochMarkerTrainer(Trainer):
    def evaluate(self, *args, **kwargs):
        metrics = super().evaluate(*args, **kwargs)
        self.log({"evaluated_at_epoch": self.state.epoch})
        return metrics
