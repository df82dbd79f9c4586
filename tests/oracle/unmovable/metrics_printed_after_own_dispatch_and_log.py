"""An `evaluate` that runs the evaluation loop, dispatches `on_evaluate` itself, then logs the metrics and
prints them.

Moved to `on_evaluate`, the print runs before `self.log(metrics)`, which adds `epoch` to the same dict:
**the printed lines differ**. The event fires before the code's place, and what the code reads changes in
between."""

from transformers import Trainer


class OwnDispatchTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        dataloader = self.get_eval_dataloader(eval_dataset)
        output = self.evaluation_loop(
            dataloader, description="Evaluation", ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix
        )
        metrics = output.metrics
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        self.log(metrics)
        print(f"evaluated at step {self.state.global_step}: {sorted(metrics)}")
        return metrics
