"""After: gc.collect and cache clearing every 50 steps, and peak memory in the logs, from a callback."""

from transformers import Trainer, TrainingArguments

from trainwright.callbacks import MemoryCallback, attach


def build_trainer(model, train_dataset, output_dir: str) -> Trainer:
    trainer = Trainer(model=model, args=TrainingArguments(output_dir=output_dir), train_dataset=train_dataset)
    attach(trainer, MemoryCallback(every_n_steps=50))
    return trainer
