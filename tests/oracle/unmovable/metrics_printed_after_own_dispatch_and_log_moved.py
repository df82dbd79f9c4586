"""The move of `metrics_printed_after_own_dispatch_and_log.py`: the print in an `on_evaluate` callback."""

from transformers import Trainer, TrainerCallback


class OwnDispatchTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(OwnDispatchTrainerEvaluateCallback(self))

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        dataloader = self.get_eval_dataloader(eval_dataset)
        output = self.evaluation_loop(
            dataloader, description="Evaluation", ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix
        )
        metrics = output.metrics
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        self.log(metrics)
        return metrics


class OwnDispatchTrainerEvaluateCallback(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        print(f"evaluated at step {state.global_step}: {sorted(metrics)}")
