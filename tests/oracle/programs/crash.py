"""``base.py`` plus a callback registered as ``SampleCallback(tokenizer=None)``: it raises
``AttributeError`` at the first step."""

from base import ReferenceTrainer  # noqa: F401 - the Trainer the oracle runs
from transformers import TrainerCallback


class SampleCallback(TrainerCallback):
    def __init__(self, tokenizer=None):
        self.tokenizer = tokenizer

    def on_step_end(self, args, state, control, **kwargs):
        print(self.tokenizer.decode([5, 6, 7]))
