"""TRL's reward convention, all of it: trainer_state, log_extra / log_metric, async rewards, reward models
as folders, None / NaN / inf, and the no-signal warning; compared with TRL 1.16 on identical inputs."""

from __future__ import annotations

import asyncio
import json
import math
import os

import pytest
import torch
from datasets import Dataset

from trainwright import GRPOTrainer
from trainwright.trainers.grpo.rewards import RewardError, RewardScorer

from .grpo_settings import small_config, tiny_reward_model


def _dataset(n: int = 8) -> Dataset:
    return Dataset.from_dict(
        {"prompt": [f"Say {i}:" for i in range(n)], "answer": [str(i % 3) for i in range(n)]}
    )


# ---- the hooks reach the logs and the completions table ------------------------------------------------


def test_grpo_trainer_state_log_metric_and_log_extra(tmp_path, tokenizer, tiny_model) -> None:
    seen_steps = []

    def scored(completions, answer, trainer_state, log_metric, log_extra, **kwargs):
        seen_steps.append(trainer_state.global_step)
        log_metric("answer_is_zero", sum(a == "0" for a in answer) / len(answer))
        log_metric("answer_is_zero", 1.0)  # two values in one round: their mean is logged
        log_extra("answer_copy", [f"<{a}>" for a in answer])
        return [float(len(c)) for c in completions]

    args = small_config(tmp_path, max_steps=2, log_completions=True, per_device_eval_batch_size=2)
    trainer = GRPOTrainer(
        tiny_model,
        scored,
        args=args,
        train_dataset=_dataset(),
        eval_dataset=_dataset(2),
        processing_class=tokenizer,
    )
    trainer.train()
    assert seen_steps == [0, 1]  # the live TrainerState: the step being trained when the round was generated
    logs = [log for log in trainer.state.log_history if "loss" in log]
    answers_per_step = []
    rows = [json.loads(line) for line in (tmp_path / "completions.jsonl").read_text().splitlines()]
    for step in (1, 2):
        answers_per_step.append([row["answer_copy"] for row in rows if row["step"] == step])
    assert all(
        len(answers) == 4 and len(set(answers)) == 1 for answers in answers_per_step
    )  # one group per round
    for log, answers in zip(logs, answers_per_step):
        share = sum(a == "<0>" for a in answers) / 4
        assert log["answer_is_zero"] == pytest.approx((share + 1.0) / 2)
    metrics = trainer.evaluate()
    assert metrics["eval_answer_is_zero"] == pytest.approx((0.5 + 1.0) / 2)  # eval prompts: answers "0", "1"
    assert "answer_is_zero" not in metrics


def test_grpo_log_extra_with_the_wrong_length_names_the_function(tmp_path, tokenizer, tiny_model) -> None:
    def chatty(completions, log_extra, **kwargs):
        log_extra("note", ["only one"])
        return [0.0] * len(completions)

    trainer = GRPOTrainer(
        tiny_model,
        chatty,
        args=small_config(tmp_path, max_steps=1),
        train_dataset=_dataset(),
        processing_class=tokenizer,
    )
    with pytest.raises(
        RewardError, match=r"'chatty' raised ValueError: log_extra\('note', ...\) got 1 values for 4"
    ):
        trainer.train()


# ---- async rewards ----------------------------------------------------------------------------------------


def _meeting_rewards():
    """Two async rewards that each wait for the other: they only finish if they run concurrently."""
    state = {}

    async def first(completions, **kwargs):
        state.setdefault("a", asyncio.Event()).set()
        await asyncio.wait_for(state.setdefault("b", asyncio.Event()).wait(), timeout=10)
        return [1.0] * len(completions)

    class Second:  # a callable object with an async __call__ (TRL supports those too)
        async def __call__(self, completions, **kwargs):
            state.setdefault("b", asyncio.Event()).set()
            await asyncio.wait_for(state.setdefault("a", asyncio.Event()).wait(), timeout=10)
            return [2.0] * len(completions)

    return first, Second(), state


def test_grpo_async_rewards_run_concurrently_on_one_loop_per_round(tokenizer) -> None:
    def sync_reward(completions, **kwargs):
        return [3.0] * len(completions)

    for _ in range(2):  # a fresh loop each call: events from the previous round's loop are not reused
        first, second, _ = _meeting_rewards()
        scorer = RewardScorer([first, sync_reward, second])
        rewards, _ = scorer.score(["p"] * 2, ["a", "b"], [[1], [2]], {})
        assert rewards.tolist() == [[1.0, 3.0, 2.0]] * 2  # each function's column, in order


def test_grpo_async_rewards_work_inside_a_running_event_loop() -> None:
    """A notebook (or an async app) already runs a loop in this thread: asyncio.run would refuse."""
    first, second, _ = _meeting_rewards()
    scorer = RewardScorer([first, second])

    async def caller():
        return scorer.score(["p"], ["c"], [[1]], {})[0]

    assert asyncio.run(caller()).tolist() == [[1.0, 2.0]]


def test_grpo_async_reward_error_names_the_function() -> None:
    async def broken(completions, **kwargs):
        raise KeyError("answer")

    with pytest.raises(RewardError, match=r"reward function 'broken' raised KeyError: 'answer'"):
        RewardScorer([broken]).score(["p"], ["c"], [[1]], {})


# ---- None, NaN and inf -------------------------------------------------------------------------------------


def test_grpo_inf_reward_is_an_error_naming_the_function() -> None:
    def explodes(completions, **kwargs):
        return [1.0, float("inf")]

    with pytest.raises(
        RewardError, match=r"reward function 'explodes' returned inf at row 1; rewards must be finite"
    ):
        RewardScorer([explodes]).score(["p", "p"], ["a", "b"], [[1], [2]], {})


def test_grpo_nan_reward_counts_as_none() -> None:
    def nan_or_one(completions, **kwargs):
        return [float("nan"), None, 1.0]

    rewards, _ = RewardScorer([nan_or_one]).score(["p"] * 3, ["a", "b", "c"], [[1], [2], [3]], {})
    assert torch.isnan(rewards[:2, 0]).all() and rewards[2, 0] == 1.0


GRPO_LOGGER = "trainwright.trainers.grpo.generation_rounds"


def _unscorable_warnings(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == GRPO_LOGGER and "All reward functions returned None" in r.getMessage()
    ]


def test_grpo_round_without_reward_signal_warns_once_and_is_counted(
    tmp_path, tokenizer, tiny_model, caplog
) -> None:
    def never_applies(completions, **kwargs):
        return [None] * len(completions)

    trainer = GRPOTrainer(
        tiny_model,
        never_applies,
        args=small_config(tmp_path, max_steps=2),
        train_dataset=_dataset(),
        processing_class=tokenizer,
    )
    with caplog.at_level("WARNING", logger="trainwright"):  # TRL's message, through logging as TRL
        trainer.train()
    messages = _unscorable_warnings(caplog)
    assert len(messages) == 2  # once per round
    assert all("for all 4 completions" in m and "'prompt': 'Say" in m for m in messages)
    logs = [log for log in trainer.state.log_history if "loss" in log]
    assert [log["frac_reward_unscorable"] for log in logs] == [1.0, 1.0]
    assert all("reward" not in log for log in logs)  # an all-NaN mean is left out, not logged as NaN
    assert [log["loss"] for log in logs] == [0.0, 0.0]


def test_grpo_partly_unscorable_round_is_counted(tmp_path, tokenizer, tiny_model, caplog) -> None:
    def half(completions, **kwargs):
        return [None if i % 2 else 1.0 for i in range(len(completions))]

    trainer = GRPOTrainer(
        tiny_model,
        half,
        args=small_config(tmp_path, max_steps=1),
        train_dataset=_dataset(),
        processing_class=tokenizer,
    )
    with caplog.at_level("WARNING", logger="trainwright"):
        trainer.train()
    assert any("2 of 4 completions got no reward" in m for m in _unscorable_warnings(caplog))
    assert trainer.state.log_history[0]["frac_reward_unscorable"] == 0.5


def test_grpo_fully_scored_round_does_not_warn(tmp_path, tokenizer, tiny_model, reward_a, caplog) -> None:
    trainer = GRPOTrainer(
        tiny_model,
        reward_a,
        args=small_config(tmp_path, max_steps=1),
        train_dataset=_dataset(),
        processing_class=tokenizer,
    )
    with caplog.at_level("WARNING", logger="trainwright"):
        trainer.train()
    assert _unscorable_warnings(caplog) == []
    assert trainer.state.log_history[0]["frac_reward_unscorable"] == 0.0


# ---- reward models ------------------------------------------------------------------------------------------


def test_grpo_reward_model_from_a_folder(tmp_path, tokenizer, tiny_model) -> None:
    reward_model = tiny_reward_model(tokenizer)
    folder = tmp_path / "judge"
    reward_model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    trainer = GRPOTrainer(
        tiny_model,
        str(folder),  # loaded as AutoModelForSequenceClassification(num_labels=1), tokenizer from the folder
        args=small_config(tmp_path, max_steps=1),
        train_dataset=_dataset(),
        processing_class=tokenizer,
    )
    assert trainer.scorer.names == ["judge"]
    trainer.train()
    assert "rewards/judge/mean" in trainer.state.log_history[0]
    sample = trainer.rounds.sample_completions([_dataset()[0]] * 2)
    encoded = tokenizer(
        [sample.prompts[0] + sample.completions[0]], return_tensors="pt", add_special_tokens=False
    )
    with torch.no_grad():
        direct = reward_model(**encoded).logits[0, 0]
    assert sample.rewards_per_func[0, 0].item() == pytest.approx(direct.item(), abs=1e-5)


# ---- parity with TRL's _calculate_rewards -----------------------------------------------------------------


def _length_plus_step(completion_ids, trainer_state, log_metric, log_extra, answer, **kwargs):
    log_metric("mean_completion_tokens", sum(len(ids) for ids in completion_ids) / len(completion_ids))
    log_extra("answer_seen", list(answer))
    return [float(len(ids)) + trainer_state.global_step for ids in completion_ids]


async def _contains_answer(completions, answer, **kwargs):
    await asyncio.sleep(0)
    return [
        1.0 if a in c else (None if i % 3 == 0 else 0.0) for i, (c, a) in enumerate(zip(completions, answer))
    ]


def test_grpo_rewards_equal_trl_on_identical_inputs(tmp_path, tokenizer, tiny_model) -> None:
    trl = pytest.importorskip("trl")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    reward_model = tiny_reward_model(tokenizer)
    funcs = [_length_plus_step, _contains_answer, reward_model]
    processing = [None, None, tokenizer]
    trl_trainer = trl.GRPOTrainer(
        model=tiny_model,
        reward_funcs=funcs,
        args=trl.GRPOConfig(
            output_dir=str(tmp_path / "trl"),
            per_device_train_batch_size=4,
            num_generations=4,
            bf16=False,
            gradient_checkpointing=False,
            report_to=[],
            use_cpu=True,
        ),
        train_dataset=_dataset(),
        processing_class=tokenizer,
        reward_processing_classes=processing,
    )
    trl_trainer.state.global_step = 7
    rows = [_dataset()[i] for i in (0, 0, 1, 1, 2, 2)]
    prompts = [row["prompt"] for row in rows]
    completions = [" 5 and", "no", " 1", "xy", "22", ""]  # rows 0 and 3: no answer, so None
    completion_ids = [tokenizer(c, add_special_tokens=False)["input_ids"] for c in completions]
    expected = trl_trainer._calculate_rewards(rows, prompts, completions, completion_ids).cpu()

    scorer = RewardScorer(funcs, None, processing)
    columns = {key: [row[key] for row in rows] for key in rows[0] if key != "prompt"}
    rewards, log = scorer.score(
        prompts, completions, completion_ids, columns, trainer_state=trl_trainer.state
    )
    torch.testing.assert_close(rewards, expected, equal_nan=True, rtol=1e-5, atol=1e-5)
    assert torch.isnan(rewards[:, 1]).sum() == 2 and not torch.isnan(rewards[:, [0, 2]]).any()
    assert rewards[0, 0] == len(completion_ids[0]) + 7  # trainer_state reached the function
    assert log.metrics == dict(trl_trainer._pending_metrics)
    assert log.extra == dict(trl_trainer._pending_extra_logs)
    assert scorer.names == trl_trainer.reward_func_names[:2] + [type(reward_model).__name__]
    assert not math.isnan(rewards[:, 2].sum().item())
