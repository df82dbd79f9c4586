"""The trainer learns: on a synthetic preference task, held-out reward accuracy reaches >= 0.9."""

from __future__ import annotations

import random

import pytest
from conftest import make_config
from datasets import Dataset

from trainwright import DPOTrainer

HOT = ["fire", "sun", "lava", "oven", "stove", "coffee", "flame", "desert"]
COLD = ["ice", "snow", "frost", "winter", "glacier", "freezer", "hail", "arctic"]


def preference_set(n: int, seed: int) -> Dataset:
    """A conditional preference: 'yes' is preferred for hot things, 'no' for cold ones.

    The answer depends on the prompt, so a constant bias toward one word cannot score above 0.5;
    held-out rows use unseen question numbers.
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        hot = rng.random() < 0.5
        thing = rng.choice(HOT if hot else COLD)
        yes_no = (" yes", " no") if hot else (" no", " yes")
        rows.append(
            {"prompt": f"Q{rng.randint(0, 999)}: is {thing} hot?", "chosen": yes_no[0], "rejected": yes_no[1]}
        )
    return Dataset.from_list(rows)


@pytest.mark.slow
def test_dpo_learns_synthetic_preferences(make_model, tokenizer, tmp_path) -> None:
    cfg = make_config(
        tmp_path,
        per_device_train_batch_size=8,
        max_steps=80,
        learning_rate=3e-3,
        beta=0.1,
        logging_steps=10,
        warmup_steps=0,
        lr_scheduler_type="constant",
    )
    trainer = DPOTrainer(
        make_model(hidden_size=64),
        args=cfg,
        train_dataset=preference_set(256, seed=0),
        eval_dataset=preference_set(64, seed=1),
        processing_class=tokenizer,
    )
    before = trainer.evaluate()["eval_rewards/accuracies"]
    trainer.train()
    after = trainer.evaluate()
    assert before < 0.5  # all-equal rewards at start: strict accuracy is 0
    assert after["eval_rewards/accuracies"] >= 0.9, after
    assert after["eval_rewards/margins"] > 0
    train_logs = [e for e in trainer.state.log_history if "rewards/accuracies" in e]
    assert train_logs[-1]["rewards/accuracies"] > train_logs[0]["rewards/accuracies"]
