"""TW202: the metrics `super().evaluate()` returns, printed and written to a file before they are returned.
The move reads them from `on_evaluate`'s `metrics` (the same dict) and names the two cases where it is not
(a dict of eval datasets, `skip_memory_metrics=False`; `tests/lint/test_move_result.py` runs them)."""

import json

from transformers import Trainer


class MetricsFileTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        print("eval loss", round(metrics["eval_loss"], 4), "at", self.state.global_step)
        with open(f"{self.args.output_dir}/metrics-{self.state.global_step}.json", "w") as handle:
            json.dump({k: v for k, v in metrics.items() if not k.endswith(("runtime", "per_second"))}, handle)
        return metrics
