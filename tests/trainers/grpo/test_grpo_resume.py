"""Resuming in the middle of a generation round continues exactly as the uninterrupted run."""

from __future__ import annotations

import os

import pytest
import torch
from transformers import TrainerCallback

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm
from trainwright.trainers.grpo.buffer import BUFFER_FILE


class StopAt(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            control.should_training_stop = True
        return control


def _trainer(output_dir, tokenizer, dataset, reward, callbacks=None):
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=1)
    args = GRPOConfig(
        output_dir=str(output_dir),
        per_device_train_batch_size=2,
        num_generations=2,
        steps_per_generation=4,
        gradient_accumulation_steps=1,
        max_steps=6,
        save_steps=2,
        max_completion_length=4,
        learning_rate=5e-3,
        report_to=[],
        use_cpu=True,
        logging_steps=1,
        seed=11,
    )
    return GRPOTrainer(
        model, reward, args=args, train_dataset=dataset, processing_class=tokenizer, callbacks=callbacks
    )


def _params(trainer):
    return [p.detach().clone() for p in trainer.model.parameters()]


def test_grpo_resume_mid_round_is_exact(tmp_path, tokenizer, prompts_dataset, reward_a):
    def reward(completion_ids, **kwargs):  # a dense reward so every step has a gradient
        return [float(sum(ids) % 7) for ids in completion_ids]

    full = _trainer(tmp_path / "full", tokenizer, prompts_dataset, reward)
    full.train()
    expected = _params(full)

    interrupted = _trainer(tmp_path / "run", tokenizer, prompts_dataset, reward, callbacks=[StopAt(2)])
    interrupted.train()
    checkpoint = tmp_path / "run" / "checkpoint-2"
    assert (checkpoint / BUFFER_FILE.format(rank=0)).exists()
    # step 2 is in the middle of the round that feeds steps 1-4 (steps_per_generation=4)
    assert interrupted.generation_backend.calls == 1

    resumed = _trainer(tmp_path / "run", tokenizer, prompts_dataset, reward)
    resumed.train(resume_from_checkpoint=str(checkpoint))
    assert resumed.generation_backend.calls == 1  # steps 3-4 from the restored buffer, one new round for 5-6
    for a, b in zip(expected, _params(resumed)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)

    # without the buffer the round is regenerated (TRL's behaviour): the run diverges
    os.remove(checkpoint / BUFFER_FILE.format(rank=0))
    regenerated = _trainer(tmp_path / "run", tokenizer, prompts_dataset, reward)
    with pytest.warns(UserWarning, match="regenerating this round"):
        regenerated.train(resume_from_checkpoint=str(checkpoint))
    assert regenerated.generation_backend.calls == 2
    assert any(not torch.equal(a, b) for a, b in zip(expected, _params(regenerated)))
