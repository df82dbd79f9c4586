"""A `log` override that adds the parameters' L2 norm to `logs` before `super().log()`.

Moved to `on_log`, the value reaches the other callbacks' `logs` but not the history: `Trainer.log`
appends `{**logs, "step": ...}` to `state.log_history` before it dispatches `on_log`, so **`log_history`
differs**. No event runs between the caller's `logs` and the record."""

import torch
from transformers import Trainer


class NormLoggingTrainer(Trainer):
    def log(self, logs, *args):
        with torch.no_grad():
            logs["param_norm"] = round(float(sum(p.norm() ** 2 for p in self.model.parameters()) ** 0.5), 4)
        super().log(logs, *args)
