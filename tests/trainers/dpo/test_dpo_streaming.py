"""Streamed (``IterableDataset``) preference data: training, evaluation, checkpoints and an exact resume."""

from __future__ import annotations

import pytest
import torch
from conftest import make_config, text_pairs
from datasets import IterableDataset

from trainwright import DPOTrainer
from trainwright.trainers.common.streaming import RepeatedStream

ROWS = text_pairs(6).to_list()


def stream() -> IterableDataset:
    """A generator-backed stream of 6 pairs (a real ``datasets`` stream: no length, no indexing)."""

    def rows():
        yield from ROWS

    return IterableDataset.from_generator(rows)


def _weights(trainer: DPOTrainer) -> list[torch.Tensor]:
    return [p.detach().clone() for p in trainer.model.parameters()]


def test_dpo_streamed_training_resumes_exactly_across_passes(make_model, tokenizer, tmp_path) -> None:
    """6 steps of 2 pairs are two passes over the stream; resuming from step 4 (inside the second pass) skips
    exactly the 4 batches trained and ends with the uninterrupted run's weights, bit for bit."""
    common = {
        "per_device_train_batch_size": 2,
        "save_strategy": "steps",
        "save_steps": 4,
        "lr_scheduler_type": "constant",
    }

    def run(folder: str, max_steps: int, resume: str | None = None) -> DPOTrainer:
        trainer = DPOTrainer(
            make_model(),
            args=make_config(tmp_path / folder, max_steps=max_steps, **common),
            train_dataset=stream(),
            processing_class=tokenizer,
        )
        assert isinstance(trainer.train_dataset, RepeatedStream)
        trainer.train(resume_from_checkpoint=resume)
        return trainer

    full = run("full", 6)
    assert full.state.global_step == 6
    start = [p.detach() for p in make_model().parameters()]
    assert not all(torch.equal(a, b) for a, b in zip(start, _weights(full)))  # it trained
    run("resumed", 4)
    checkpoint = str(tmp_path / "resumed" / "out" / "checkpoint-4")
    resumed = run("resumed", 6, resume=checkpoint)
    assert resumed.state.global_step == 6
    assert all(torch.equal(a, b) for a, b in zip(_weights(full), _weights(resumed))), (
        "weights differ after resume"
    )
    # the token count is part of the checkpointed state, so it continues too
    assert resumed.state.num_input_tokens_seen == full.state.num_input_tokens_seen > 0


def test_dpo_repeated_stream_reads_pass_after_pass_and_refuses_an_empty_one() -> None:
    rows = list(zip(range(7), RepeatedStream(stream())))
    assert [row["prompt"] for _, row in rows] == [r["prompt"] for r in ROWS + ROWS[:1]]
    with pytest.raises(ValueError, match="streamed train dataset yielded no rows"):
        next(iter(RepeatedStream(stream().filter(lambda row: False))))


def test_dpo_evaluate_on_a_stream_equals_the_map_style_set(make_model, tokenizer, tmp_path) -> None:
    # 3 divides the 6 rows: accelerate completes a stream's short last batch with rows from its first one
    # (and drops their results from the gathered metrics, but Trainer's eval_loss is that batch's mean)
    trainer = DPOTrainer(
        make_model(),
        ref_model=make_model(seed=1),
        args=make_config(tmp_path, per_device_eval_batch_size=3),
        train_dataset=text_pairs(4),
        eval_dataset={"streamed": stream()},
        processing_class=tokenizer,
    )
    from_stream = trainer.evaluate()
    from_rows = trainer.evaluate(text_pairs(6))
    assert from_stream["eval_streamed_loss"] == pytest.approx(from_rows["eval_loss"], rel=1e-6)
    assert from_stream["eval_rewards/margins"] == pytest.approx(from_rows["eval_rewards/margins"], rel=1e-5)
    assert trainer.evaluate(stream())["eval_loss"] == pytest.approx(from_rows["eval_loss"], rel=1e-6)


def test_dpo_stream_settings_follow_trl(make_model, tokenizer, tmp_path, caplog) -> None:
    """dispatch_batches is forced off (with a warning when set on) and one worker reads a training stream;
    precompute, which stores reference log-probs as a column, is refused for a stream."""
    with caplog.at_level("WARNING", logger="trainwright"):
        trainer = DPOTrainer(
            make_model(),
            args=make_config(
                tmp_path, accelerator_config={"dispatch_batches": True}, dataloader_num_workers=2
            ),
            train_dataset=stream(),
            processing_class=tokenizer,
        )
    assert trainer.args.accelerator_config.dispatch_batches is False
    assert trainer.args.dataloader_num_workers == 0
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("trainwright")]
    assert any("dispatch_batches=True" in m for m in messages)
    assert any("dataloader_num_workers=2" in m for m in messages)
    for train, evaluation in ((stream(), None), (text_pairs(4), {"held_out": stream()})):
        with pytest.raises(
            ValueError, match="precompute_ref_log_probs=True is not supported with IterableDataset"
        ):
            DPOTrainer(
                make_model(),
                args=make_config(tmp_path, precompute_ref_log_probs=True),
                train_dataset=train,
                eval_dataset=evaluation,
                processing_class=tokenizer,
            )
