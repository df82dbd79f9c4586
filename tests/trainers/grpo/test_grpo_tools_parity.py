"""Tool calling against TRL: TRL's ``GRPOTrainer`` and ours train the same nudged toy model with the same
``tools=`` and ``environment_factory=``; completions (tool results included), completion ids, loss masks,
rewards, losses and the tool metrics agree step by step.

The model is nudged to call the calculator after every assistant header (so rollouts are the same in
both libraries whatever their random draws); the environment's instances answer with different lengths,
so ``max_completion_length`` cuts the continuation of some rollouts and rolls a turn back for others,
and rewards differ within a group (non-zero advantages and losses).
"""

from __future__ import annotations

import math
import os

import pytest

pytest.importorskip("jmespath")  # TRL's tool path imports it on some transformers releases
trl = pytest.importorskip("trl")

import torch
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.trainers.grpo.tool_chat import CHATML_TOOL_RESPONSE_TEMPLATE

from .tool_world import (
    PROMPT,
    calculator,
    environment_class,
    nudged_model,
    tool_tokenizer,
)

STEPS = 3


def square(x: int) -> int:
    """Square a number (offered to the model, never called by it).

    Args:
        x: The number.
    """
    return x * x


def _run(library: str, tmp_path) -> dict[str, list]:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    tokenizer = tool_tokenizer()
    tokenizer.response_template = dict(CHATML_TOOL_RESPONSE_TEMPLATE)  # TRL has no parser for this template
    model = nudged_model(tokenizer)
    record: dict[str, list] = {"completions": [], "completion_ids": [], "masks": [], "ids": []}

    def reward(completions, completion_ids, environments, **kwargs):
        record["completions"].append(completions)
        record["completion_ids"].append(completion_ids)
        return [float(len(ids)) / 10 for ids in completion_ids]

    config_class, trainer_class = (
        (trl.GRPOConfig, trl.GRPOTrainer) if library == "trl" else (GRPOConfig, GRPOTrainer)
    )

    class Recording(trainer_class):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            mask = inputs["completion_mask"] * inputs["tool_mask"]
            width = int(inputs["completion_mask"].sum(0).nonzero().max()) + 1
            # TRL shuffles a round's rows before cutting micro-batches: compare each micro-batch as a set of rows
            rows = sorted(zip(inputs["completion_ids"][:, :width].tolist(), mask[:, :width].tolist()))
            record["ids"].append([ids for ids, _ in rows])
            record["masks"].append([row_mask for _, row_mask in rows])
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    args = config_class(
        output_dir=str(tmp_path / library),
        per_device_train_batch_size=4,
        num_generations=4,
        max_steps=STEPS,
        max_completion_length=16,
        max_tool_calling_iterations=2,
        learning_rate=1e-3,  # Adam moves every weight by about this much, however small the gradient
        logging_steps=1,
        shuffle_dataset=False,
        bf16=False,
        use_cpu=True,
        gradient_checkpointing=False,
        report_to=[],
        seed=0,
    )
    trainer = Recording(
        model=model,
        reward_funcs=reward,
        args=args,
        train_dataset=Dataset.from_dict({"prompt": [PROMPT] * 8}),
        processing_class=tokenizer,
        tools=[square],
        environment_factory=environment_class(),
    )
    trainer.train()
    record["logs"] = [entry for entry in trainer.state.log_history if "loss" in entry]
    return record


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    tmp = tmp_path_factory.mktemp("tools_parity")
    return _run("trl", tmp), _run("ours", tmp)


def test_completions_tool_results_and_ids_agree(runs):
    theirs, ours = runs
    assert len(ours["completions"]) == len(theirs["completions"]) == STEPS
    assert ours["completions"] == theirs["completions"]
    assert ours["completion_ids"] == theirs["completion_ids"]
    first = ours["completions"][0]
    assert first[0][1] == {"role": "tool", "name": "calculator", "content": "7!"}
    # every second call is rolled back (its results would not fit in 16 tokens); the rollout whose results
    # fill the budget ends with no continuation at all
    assert sorted(len(messages) for messages in first) == [2, 3, 3, 3]


def test_loss_masks_agree_and_hide_tool_results(runs):
    theirs, ours = runs
    assert ours["ids"] == theirs["ids"]
    assert ours["masks"] == theirs["masks"]
    for ids, masks in zip(ours["ids"], ours["masks"]):
        for row, mask in zip(ids, masks):
            assert mask[:2] == [1, 1]  # the sampled call and its EOS count
            if len(row) > 2 and sum(mask) < len(row):
                assert 0 in mask[2:]  # tool-result tokens do not


def test_rewards_losses_and_tool_metrics_agree(runs):
    theirs, ours = runs
    keys = [
        "loss",
        "reward",
        "reward_std",
        "tools/call_frequency",
        "tools/failure_frequency",
        "completions/mean_length",
        "completions/max_length",
        "completions/clipped_ratio",
        "rewards/CalculatorEnv/mean",
        "rewards/reward/mean",
    ]
    assert len(ours["logs"]) == len(theirs["logs"]) == STEPS
    for step, (a, b) in enumerate(zip(theirs["logs"], ours["logs"]), start=1):
        for key in keys:
            assert math.isclose(a[key], b[key], rel_tol=1e-4, abs_tol=1e-6), (step, key, a[key], b[key])
    assert any(abs(entry["loss"]) > 1e-4 for entry in ours["logs"])


def test_the_standalone_tool_is_shown_not_called():
    assert calculator("3 + 4") == "7"
