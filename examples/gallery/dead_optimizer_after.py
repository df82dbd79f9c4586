"""After: hand the optimiser class to the Trainer; train() builds it (and the scheduler) itself."""

import torch
from transformers import Trainer, TrainingArguments


def build_trainer(model, train_dataset, output_dir: str) -> Trainer:
    args = TrainingArguments(output_dir=output_dir, learning_rate=0.1)
    return Trainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        optimizer_cls_and_kwargs=(torch.optim.SGD, {"lr": args.learning_rate}),
    )
