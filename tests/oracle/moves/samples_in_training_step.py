"""TW201 (gallery `sample_generation_before.py`): a sample generated and printed every N steps inside
training_step, with the model argument."""

from transformers import Trainer


class SamplingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 2 == 0:
            prompt = self.processing_class("Once upon a time", return_tensors="pt").to(model.device)
            sample = model.generate(**prompt, max_new_tokens=4, do_sample=False)
            print(self.processing_class.decode(sample[0]))
        return loss
