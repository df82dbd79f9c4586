"""Issue 37, item 3: GRPO's ``compute_loss`` inputs carry ``num_items_in_batch`` as TRL's do: the loss tokens
of the whole generation round (all processes), in training and in evaluation."""

from __future__ import annotations

import torch
from datasets import Dataset

from trainwright import GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

from .grpo_settings import small_config

torch.set_num_threads(1)


class Recording(GRPOTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[no-untyped-def]
        self.seen.append(
            (model.training, inputs["num_items_in_batch"].item(), inputs["completion_mask"].sum().item())
        )
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


def test_grpo_loss_inputs_hold_num_items_in_batch(tmp_path):
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    data = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(8)]})
    args = small_config(tmp_path, steps_per_generation=2, max_steps=2, max_completion_length=5,
                        per_device_eval_batch_size=4, eval_strategy="no")  # fmt: skip
    trainer = Recording(model, lambda completion_ids, **kw: [float(len(c)) for c in completion_ids], args=args,
                        train_dataset=data, eval_dataset=data.select(range(2)), processing_class=tokenizer)  # fmt: skip
    trainer.seen = []
    trainer.train()
    train = [row for row in trainer.seen if row[0]]
    assert len(train) == 2  # one round of two micro-steps
    # TRL: the loss tokens of the whole round, the same value in each of its micro-batches
    assert train[0][1] == train[1][1] == train[0][2] + train[1][2] > 0
    trainer.evaluate()
    evaluation = [row for row in trainer.seen if not row[0]]
    assert evaluation and all(items == tokens for _, items, tokens in evaluation)
