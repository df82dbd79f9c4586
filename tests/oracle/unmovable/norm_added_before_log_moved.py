"""The move of `norm_added_before_log.py`: the norm added in an `on_log` callback, the override gone."""

import torch
from transformers import Trainer, TrainerCallback


class NormLoggingTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(NormLoggingTrainerLogCallback(self))


class NormLoggingTrainerLogCallback(TrainerCallback):
    def __init__(self, trainer):
        self.trainer = trainer

    def on_log(self, args, state, control, logs=None, **kwargs):
        with torch.no_grad():
            logs["param_norm"] = round(
                float(sum(p.norm() ** 2 for p in self.trainer.model.parameters()) ** 0.5), 4
            )
