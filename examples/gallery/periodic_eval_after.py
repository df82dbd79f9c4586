"""After: evaluate every 50 steps by setting the control flag in on_step_end, through a callback."""

from transformers import Trainer, TrainingArguments

from trainwright.callbacks import ControlScheduleCallback, Schedule


def build_trainer(model, train_dataset, eval_dataset, output_dir: str) -> Trainer:
    args = TrainingArguments(output_dir=output_dir)
    return Trainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        callbacks=[ControlScheduleCallback(evaluate=Schedule.every(50))],
    )
