"""Streamed (generator-backed ``datasets.IterableDataset``) training and evaluation: rounds read from the
stream, buffered across ``steps_per_generation``, passes over the stream, exact resume, and the
``dispatch_batches`` / worker settings a stream needs."""

from __future__ import annotations

import pytest
import torch
from datasets import Dataset, IterableDataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm

from .test_grpo_resume import StopAt

NUM_PROMPTS = 5


def _rows():
    for i in range(NUM_PROMPTS):
        yield {"prompt": f"Say {i}:", "idx": i}


def _stream() -> IterableDataset:
    return IterableDataset.from_generator(_rows)


class Recorder:
    """A dense reward that records which prompts (``idx`` column) every scoring call saw."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []
        self.__name__ = "recorder"

    def __call__(self, completion_ids, idx, **kwargs):
        self.calls.append(list(idx))
        return [float(sum(ids) % 7) for ids in completion_ids]


def _trainer(output_dir, tokenizer, reward, train_dataset=None, callbacks=None, **overrides):
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=1)
    settings = {
        "output_dir": str(output_dir),
        "per_device_train_batch_size": 2,
        "num_generations": 2,
        "steps_per_generation": 2,
        "max_steps": 6,
        "save_steps": 3,
        "max_completion_length": 3,
        "learning_rate": 5e-3,
        "report_to": [],
        "use_cpu": True,
        "logging_steps": 1,
        "seed": 11,
    }
    settings.update(overrides)
    return GRPOTrainer(
        model,
        reward,
        args=GRPOConfig(**settings),
        train_dataset=_stream() if train_dataset is None else train_dataset,
        processing_class=tokenizer,
        callbacks=callbacks,
    )


def test_streamed_rounds_follow_the_stream_across_passes(tmp_path, tokenizer):
    reward = Recorder()
    trainer = _trainer(tmp_path, tokenizer, reward, shuffle_dataset=False)
    assert trainer.args.accelerator_config.dispatch_batches is False  # set for the stream, as TRL
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    # a round = 2 per device x 2 steps / G=2 = 2 prompts; 6 steps = 3 rounds, one generate call each;
    # 5 prompts give 2 whole rounds a pass (the 5th is dropped), then the stream starts its next pass
    assert trainer.generation_backend.calls == 3
    assert reward.calls == [[0, 0, 1, 1], [2, 2, 3, 3], [0, 0, 1, 1]]
    assert trainer.state.global_step == 6
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))


def test_streamed_shuffle_is_seeded_and_differs_between_passes(tmp_path, tokenizer):
    first, second = Recorder(), Recorder()
    _trainer(tmp_path / "a", tokenizer, first, max_steps=8).train()
    _trainer(tmp_path / "b", tokenizer, second, max_steps=8).train()
    assert first.calls == second.calls  # the same seed gives the same order
    passes = [sorted(set(first.calls[0] + first.calls[1])), sorted(set(first.calls[2] + first.calls[3]))]
    assert all(len(p) == 4 and set(p) <= set(range(NUM_PROMPTS)) for p in passes)
    assert first.calls[:2] != first.calls[2:]  # each pass reshuffles (seed + pass)


def test_streamed_resume_mid_round_is_exact(tmp_path, tokenizer):
    full_reward = Recorder()
    full = _trainer(tmp_path / "full", tokenizer, full_reward)
    full.train()

    interrupted = _trainer(tmp_path / "run", tokenizer, Recorder(), callbacks=[StopAt(3)])
    interrupted.train()
    # step 3 is the first half of the round feeding steps 3-4: the checkpoint holds its buffer
    assert interrupted.generation_backend.calls == 2

    resumed_reward = Recorder()
    resumed = _trainer(tmp_path / "run", tokenizer, resumed_reward)
    resumed.train(resume_from_checkpoint=str(tmp_path / "run" / "checkpoint-3"))
    # step 4 from the restored buffer, then the round of steps 5-6: the prompts the full run saw there
    assert resumed.generation_backend.calls == 1
    assert resumed_reward.calls == full_reward.calls[2:]
    for a, b in zip(full.model.parameters(), resumed.model.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_streamed_evaluation_and_training_metrics(tmp_path, tokenizer, reward_a):
    eval_stream = IterableDataset.from_generator(_rows)
    trainer = _trainer(
        tmp_path, tokenizer, reward_a, max_steps=2, save_strategy="no", dataloader_num_workers=2
    )
    assert trainer.args.dataloader_num_workers == 0  # a streamed train set is read by one worker
    metrics = trainer.evaluate(eval_dataset=eval_stream)
    assert metrics["eval_loss"] is not None and "eval_rewards/char_fraction_a/mean" in metrics
    trainer.train()
    assert "rewards/char_fraction_a/std" in trainer.state.log_history[0]


def test_streamed_evaluation_keeps_map_style_train_workers(tmp_path, tokenizer, reward_a, prompts_dataset):
    trainer = _trainer(
        tmp_path,
        tokenizer,
        reward_a,
        train_dataset=prompts_dataset,
        dataloader_num_workers=2,
        save_strategy="no",
    )
    trainer.eval_dataset = _stream()
    assert trainer.get_train_dataloader().num_workers == 2
    assert trainer.get_eval_dataloader().num_workers == 0  # for this loader only
    assert trainer.args.dataloader_num_workers == 2


def test_stream_settings_are_refused_or_adjusted_by_name(tmp_path, tokenizer, reward_a, caplog):
    with pytest.raises(ValueError, match=r"Iterable datasets require `dispatch_batches=False`"):
        _trainer(tmp_path, tokenizer, reward_a, accelerator_config={"dispatch_batches": True})
    with caplog.at_level("WARNING", logger="trainwright"):
        _trainer(tmp_path, tokenizer, reward_a, dataloader_num_workers=3)
    assert "overriding dataloader_num_workers=3 with 0" in caplog.text
    with pytest.raises(ValueError, match="dynamic_sampling .* streamed train_dataset"):
        _trainer(tmp_path, tokenizer, reward_a, dynamic_sampling=True)


def test_too_short_a_stream_names_the_numbers(tmp_path, tokenizer, reward_a):
    short = Dataset.from_dict({"prompt": ["a:"], "idx": [0]}).to_iterable_dataset()
    trainer = _trainer(tmp_path, tokenizer, reward_a, train_dataset=short, save_strategy="no")
    with pytest.raises(
        ValueError, match="streamed training dataset has 1 prompts but one generation round needs 2"
    ):
        trainer.train()


def test_a_streamed_row_without_a_prompt_is_named(tmp_path, tokenizer, reward_a):
    def rows():
        yield {"prompt": "Say 0:", "idx": 0}
        yield {"question": "Say 1:", "idx": 1}

    stream = IterableDataset.from_generator(rows)
    trainer = _trainer(tmp_path, tokenizer, reward_a, train_dataset=stream, save_strategy="no", max_steps=1)
    with pytest.raises(ValueError, match=r"a row without a 'prompt' column \(\['idx', 'question'\]\)"):
        trainer.train()
