# expect: TW102
"""Overriding create_optimizer_and_scheduler, which train() no longer calls since transformers 5.1:
the custom optimiser is silently ignored."""

import torch
from transformers import Trainer


class SgdTrainer(Trainer):
    def create_optimizer_and_scheduler(self, num_training_steps):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.args.learning_rate)
        self.create_scheduler(num_training_steps, self.optimizer)
