"""TW201: a record kept on the trainer after `super().evaluate()` (the best evaluation loss so far), which
`log` adds to every later `logs`, so `log_history` shows it. `on_evaluate` receives the same `metrics`,
so the move keeps the record on the trainer from there (and names when that dict differs)."""

import math

from transformers import Trainer


class BestEvalTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.best_eval_loss = math.inf

    def log(self, logs, start_time=None):
        logs["best_eval_loss"] = self.best_eval_loss  # merging a value into `logs`: not a move
        super().log(logs, start_time)

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        self.best_eval_loss = min(self.best_eval_loss, round(metrics["eval_loss"], 4))
        return metrics
