"""TW202: a sample generated after `super().evaluate()` and printed. The generation calls what is not
known to be pure (`model.generate` draws random numbers when it samples), so it moves only because
`on_evaluate` fires as `evaluate` returns: the callback samples at the same point of training, and the
shuffle of the next epoch draws from the same random state."""

import torch
from transformers import Trainer


class SampleAfterEvalTrainer(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        prompt = torch.tensor([[5, 6, 7]], device=self.model.device)
        out = self.model.generate(prompt, max_new_tokens=4, do_sample=True, pad_token_id=0)
        print("sample after evaluation:", out[0].tolist())
        return metrics
