"""A GRPO run whose rounds teach nothing (every group's rewards agree) says so in the log, at a bounded rate.

The audit: a round where every reward is equal (so every advantage is 0) raised no warning; the run
trained on, logging normal-looking numbers. Now the logger ``trainwright.trainers.grpo.learning_signal``
warns at the first such round and then every N-th, with the running count, never once per step.
"""

from __future__ import annotations

import logging

import pytest
from rel_trainers import grpo_trainer

from trainwright.trainers.grpo.learning_signal import NoSignalRounds

pytest.importorskip("datasets")

LOGGER = "trainwright.trainers.grpo.learning_signal"


def constant_reward(completion_ids, **kwargs):
    return [1.0 for _ in completion_ids]


def distinct_reward(completion_ids, **kwargs):
    return [float(i) for i in range(len(completion_ids))]  # no two completions of a group agree


def run(tmp_path, reward, caplog) -> tuple[object, list[str]]:
    """Seven one-step rounds (steps_per_generation=1) of the tiny GRPO run, its log lines captured."""
    trainer = grpo_trainer(tmp_path, reward=reward, max_steps=7, steps_per_generation=1, save_steps=100)
    trainer.rounds.no_signal_rounds = NoSignalRounds(every=3)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        trainer.train()
    return trainer, [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_rounds_where_every_reward_agrees_are_logged_at_a_bounded_rate(tmp_path, caplog):
    trainer, lines = run(tmp_path, constant_reward, caplog)
    assert trainer.state.global_step == 7 and trainer.rounds.no_signal_rounds.count == 7
    assert len(lines) == 3  # rounds 1, 3 and 6 of 7: the first, then every third
    assert "has no learning signal: every completion scored 1, so every advantage is 0" in lines[0]
    counts = [line[line.index("(") :][:14] for line in lines]
    assert counts == ["(1 of 1 rounds", "(3 of 3 rounds", "(6 of 6 rounds"]
    assert all("dynamic_sampling=True" in line for line in lines)


def test_a_run_with_a_learning_signal_logs_nothing(tmp_path, caplog):
    trainer, lines = run(tmp_path, distinct_reward, caplog)
    assert (
        lines == []
        and trainer.rounds.no_signal_rounds.count == 0
        and trainer.rounds.no_signal_rounds.rounds == 7
    )
