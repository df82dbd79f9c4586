"""A tiny model built from a config learns a toy reward: emit the character 'a'."""

from __future__ import annotations

import pytest
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm


@pytest.mark.slow
@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_grpo_tiny_model_learns_to_emit_a(tmp_path, tokenizer, reward_a, loss_type):
    model = build_tiny_causal_lm(tokenizer)  # 2-layer Qwen2, random init
    dataset = Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(64)]})
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=16,
        num_generations=8,
        max_completion_length=8,
        max_steps=40,
        learning_rate=3e-2,
        lr_scheduler_type="constant",
        loss_type=loss_type,
        logging_steps=5,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        seed=0,
    )
    trainer = GRPOTrainer(model, reward_a, args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()
    rewards = [log["reward"] for log in trainer.state.log_history if "reward" in log]
    assert len(rewards) == 8
    start, end = rewards[0], sum(rewards[-2:]) / 2  # first 5 steps vs last 10
    assert start < 0.2  # a random model rarely emits 'a'
    assert end > start + 0.5, rewards
