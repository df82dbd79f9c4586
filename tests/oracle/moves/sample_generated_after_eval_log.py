"""TW202: a sample generated and printed after `super().log()` when the logs are an evaluation's. `on_log`
fires as `log` returns and receives the same `logs`, so the move samples at the same point of training
(the generation's random numbers drawn at the same moment) and on the same calls."""

import torch
from transformers import Trainer


class SampleOnEvalLogTrainer(Trainer):
    def log(self, logs, start_time=None):
        super().log(logs, start_time)
        if "eval_loss" in logs:
            prompt = torch.tensor([[5, 6, 7]], device=self.model.device)
            out = self.model.generate(prompt, max_new_tokens=4, do_sample=True, pad_token_id=0)
            print(f"step {self.state.global_step} sample:", out[0].tolist())
