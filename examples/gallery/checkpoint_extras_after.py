"""After: extra files written into each checkpoint folder from on_save."""

from transformers import Trainer, TrainingArguments

from trainwright.callbacks import CheckpointExtrasCallback


def build_trainer(model, train_dataset, output_dir: str, learning_rate: float = 5e-5) -> Trainer:
    args = TrainingArguments(output_dir=output_dir, learning_rate=learning_rate)
    extras = CheckpointExtrasCallback({"run_config.json": {"lr": learning_rate}})
    return Trainer(model=model, args=args, train_dataset=train_dataset, callbacks=[extras])
