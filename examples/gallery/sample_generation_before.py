# expect: TW201
"""Generating samples every 200 steps from inside training_step: a side effect gated by the step
counter, in the one method that runs for every micro-batch."""

from transformers import Trainer


class SamplingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 200 == 0:
            prompt = self.processing_class("Once upon a time", return_tensors="pt").to(model.device)
            sample = model.generate(**prompt, max_new_tokens=32)
            print(self.processing_class.decode(sample[0]))
        return loss
