"""After: step time, samples/s and tokens/s from a callback; no override at all."""

from transformers import Trainer, TrainingArguments

from trainwright.callbacks import StepTimerCallback, attach


def build_trainer(model, train_dataset, output_dir: str) -> Trainer:
    args = TrainingArguments(output_dir=output_dir, include_num_input_tokens_seen="non_padding")
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    attach(trainer, StepTimerCallback())  # before the reporters, so W&B/TensorBoard see the numbers
    return trainer
