"""After: stop (and save) on a non-finite or spiking loss from on_log, through a callback."""

from transformers import Trainer, TrainingArguments

from trainwright.callbacks import LossGuardCallback


def build_trainer(model, train_dataset, output_dir: str) -> Trainer:
    # logging_nan_inf_filter=False lets the guard see a NaN loss instead of the filtered mean
    args = TrainingArguments(output_dir=output_dir, logging_steps=1, logging_nan_inf_filter=False)
    guard = LossGuardCallback(spike_factor=5.0, action="save_and_stop")
    return Trainer(model=model, args=args, train_dataset=train_dataset, callbacks=[guard])
