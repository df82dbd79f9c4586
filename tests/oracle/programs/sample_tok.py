"""A Trainer that keeps its own tokenizer and decodes with it every 2 steps (issue 32's third wrong
suggestion: the callback was registered with ``tok=None``)."""

from transformers import Trainer


class SampleTrainer(Trainer):
    def __init__(self, *args, tokenizer=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.tok = tokenizer

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 2 == 0:
            print(self.tok.decode([5, 6]))
        return loss
