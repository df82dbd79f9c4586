"""GRPOTrainer end to end on a tiny real model: generation counts, buffering, rewards, logging, bad input."""

from __future__ import annotations

import copy
import json
import math

import pytest
import torch
from datasets import Dataset

from trainwright import GRPOTrainer
from trainwright.trainers.grpo.rewards import RewardError

from .grpo_settings import small_config, tiny_reward_model


class CountingBackend:
    """Wraps the real backend and records the size of every generate call."""

    def __init__(self, inner):
        self.inner, self.sizes = inner, []
        self.eos_token_ids = inner.eos_token_ids

    def generate(self, model, prompt_ids):
        self.sizes.append(len(prompt_ids))
        return self.inner.generate(model, prompt_ids)


@pytest.mark.parametrize(
    ("ga", "spg", "mu", "steps"),
    [(1, 1, 1, 4), (2, 2, 1, 3), (1, 4, 1, 8), (2, 4, 2, 8), (4, 2, 1, 2), (3, 2, 1, 2)],
)
def test_grpo_generate_calls_follow_the_formula(
    tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a, ga, spg, mu, steps
):
    args = small_config(
        tmp_path,
        gradient_accumulation_steps=ga,
        steps_per_generation=spg,
        num_iterations=mu,
        max_steps=steps,
        per_device_train_batch_size=2,
        num_generations=2,
    )
    trainer = GRPOTrainer(
        tiny_model, reward_a, args=args, train_dataset=prompts_dataset, processing_class=tokenizer
    )
    backend = CountingBackend(trainer.generation_backend)
    trainer.generation_backend = backend
    trainer.train()
    micro_steps = steps * ga
    assert len(backend.sizes) == math.ceil(micro_steps / (spg * mu))
    # one call covers steps_per_generation micro-batches
    assert set(backend.sizes) == {2 * spg}


def test_grpo_old_logps_only_when_the_ratio_can_differ(
    tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a
):
    on_policy = GRPOTrainer(
        tiny_model,
        reward_a,
        args=small_config(tmp_path, gradient_accumulation_steps=2, steps_per_generation=2),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    assert not on_policy.rounds.needs_old_logps()
    off_policy = GRPOTrainer(
        tiny_model,
        lambda completion_ids, **kwargs: [float(sum(ids) % 7) for ids in completion_ids],  # dense: a gradient
        args=small_config(tmp_path, steps_per_generation=2, max_steps=2),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    assert off_policy.rounds.needs_old_logps()
    sampler = copy.deepcopy(off_policy.model)  # the policy that will generate the (only) round
    off_policy.train()
    buffered = off_policy.round_buffer.micro_batches
    assert len(buffered) == 2 and all("old_per_token_logps" in part for part in buffered)
    for part in buffered:
        with torch.no_grad():
            sampled_by = off_policy.completion_logps(sampler, part)
            now = off_policy.completion_logps(off_policy.model, part)
        # π_old is the policy that sampled the round, not the one that trains on slot 1 ...
        torch.testing.assert_close(part["old_per_token_logps"], sampled_by)
        # ... which has moved (one update after slot 0), so the ratio at slot 1 is not 1
        assert (now - sampled_by).abs().max() > 1e-6


def test_grpo_shared_prompt_forward_equals_plain(
    tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a, monkeypatch
):
    """Each distinct prompt of a micro-batch runs once (its G completions share it): same log-probs, loss and
    gradients as one plain forward. Forced on here, since the tiny model is below the size threshold."""
    from trainwright.trainers.common import logprobs
    from trainwright.trainers.grpo import trainer as grpo_module
    from trainwright.trainers.grpo.loss import grpo_loss

    monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0)
    monkeypatch.setattr(logprobs, "WEIGHT_GRADIENT_TOKENS", 0)
    trainer = GRPOTrainer(
        tiny_model,
        reward_a,
        args=small_config(
            tmp_path,
            max_steps=1,
            gradient_accumulation_steps=2,
            steps_per_generation=2,
            shuffle_round_rows=False,  # whole groups: each micro-batch holds one prompt
        ),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    runs = []
    real = grpo_module.shared_prefix_logits
    monkeypatch.setattr(grpo_module, "shared_prefix_logits", lambda *a, **k: runs.append(1) or real(*a, **k))
    params = list(trainer.model.parameters())
    for part in trainer.round_buffer.micro_batches:
        # a micro-batch of 4 rows holds one prompt's 4 completions
        assert part["prompt_rows"].numel() == 1 and part["prompt_inverse"].tolist() == [0, 0, 0, 0]
        results = []
        for share in (True, False):
            trainer._prefix_sharing.enabled = share
            logps = trainer.completion_logps(trainer.model, part)
            loss = grpo_loss(
                logps,
                part["advantages"] + torch.linspace(-1, 1, 4),  # a gradient even if the rewards tie
                part["completion_mask"],
                tokens_per_micro_step=part["tokens_per_micro_step"],
            ).loss
            results.append((logps, loss, torch.autograd.grad(loss, params)))
        (shared, shared_loss, shared_grads), (plain, plain_loss, plain_grads) = results
        torch.testing.assert_close(shared, plain, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(shared_loss, plain_loss, atol=1e-6, rtol=1e-5)
        for a, b in zip(shared_grads, plain_grads):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
    assert len(runs) == len(trainer.round_buffer.micro_batches)


def test_grpo_training_changes_the_policy_and_logs_trl_metrics(
    tmp_path, tokenizer, tiny_model, prompts_dataset
):
    def length_reward(completion_ids, **kwargs):
        return [float(len(ids) + ids[0] % 5) for ids in completion_ids]

    before = [p.detach().clone() for p in tiny_model.parameters()]
    args = small_config(tmp_path, max_steps=2, beta=0.1, loss_type="grpo", max_completion_length=4)
    trainer = GRPOTrainer(
        tiny_model, length_reward, args=args, train_dataset=prompts_dataset, processing_class=tokenizer
    )
    trainer.train()
    assert any(not torch.equal(a, b) for a, b in zip(before, tiny_model.parameters()))
    logs = trainer.state.log_history[0]
    for key in (
        "reward",
        "reward_std",
        "rewards/length_reward/mean",
        "completions/mean_length",
        "completions/clipped_ratio",
        "kl",
        "clip_ratio/low_mean",
        "clip_ratio/high_mean",
        "clip_ratio/region_mean",
        "frac_reward_zero_std",
        "loss",
        "grad_norm",
    ):
        assert key in logs, key
    assert logs["reward"] == pytest.approx(logs["rewards/length_reward/mean"])  # one function, weight 1
    assert logs["reward"] >= logs["completions/mean_length"]


def test_grpo_reward_functions_receive_trl_arguments_and_weights(
    tmp_path, tokenizer, tiny_model, prompts_dataset
):
    calls = []

    def check_args(prompts, completions, completion_ids, target, **kwargs):
        calls.append((prompts, completions, completion_ids, target))
        return [1.0] * len(prompts)

    def sometimes_none(prompts, **kwargs):
        return [None if i % 2 else 2.0 for i in range(len(prompts))]

    args = small_config(tmp_path, max_steps=1, reward_weights=[1.0, 0.5])
    trainer = GRPOTrainer(
        tiny_model,
        [check_args, sometimes_none],
        args=args,
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    prompts, completions, completion_ids, target = calls[0]
    assert len(prompts) == len(completions) == len(completion_ids) == len(target) == 4
    assert (
        len(set(prompts)) == 1 and target == ["a"] * 4
    )  # one group of G copies; extra column passed through
    assert completions == tokenizer.batch_decode(completion_ids, skip_special_tokens=True)
    logs = trainer.state.log_history[0]
    assert logs["rewards/sometimes_none/mean"] == 2.0  # None rows ignored
    assert logs["reward"] == pytest.approx((1.0 + 0.5 * 2.0 + 1.0) / 2)  # rows: 1+1, 1 (None skipped)


def test_grpo_conversational_prompts_use_the_chat_template(tmp_path, tokenizer, tiny_model):
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": f"hi {i}"}]} for i in range(4)])
    seen = []

    def reward(prompts, completions, **kwargs):
        seen.extend(completions)
        return [len(c[0]["content"]) / 10 for c in completions]

    trainer = GRPOTrainer(
        tiny_model,
        reward,
        args=small_config(tmp_path, max_steps=1),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    expected = tokenizer.apply_chat_template(dataset[0]["prompt"], add_generation_prompt=True, tokenize=True)
    expected = expected["input_ids"] if hasattr(expected, "keys") else expected
    assert trainer.rounds.tokenize_prompts([dataset[0]["prompt"]]) == [list(expected)]
    trainer.train()
    assert all(c[0]["role"] == "assistant" for c in seen)


def test_grpo_reward_model_scores_prompt_plus_completion(tmp_path, tokenizer, tiny_model, prompts_dataset):
    reward_model = tiny_reward_model(tokenizer)
    trainer = GRPOTrainer(
        tiny_model,
        reward_model,
        args=small_config(tmp_path, max_steps=1),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
        reward_processing_classes=tokenizer,
    )
    trainer.train()
    sample = trainer.rounds.sample_completions([prompts_dataset[0]] * 2)
    text = sample.prompts[0] + sample.completions[0]
    encoded = tokenizer([text], return_tensors="pt", add_special_tokens=False)
    with torch.no_grad():
        direct = reward_model(**encoded).logits[0, 0]
    assert sample.rewards_per_func[0, 0].item() == pytest.approx(direct.item(), abs=1e-5)


def test_grpo_dynamic_sampling_refills_flat_groups(tmp_path, tokenizer, tiny_model):
    """Prompts p0, p4, p8.. get a constant reward (a flat group: no signal); the others reward the
    first sampled token."""
    dataset = Dataset.from_dict({"prompt": [f"p{i}" for i in range(16)], "idx": list(range(16))})

    calls = []  # (global step, rows) of every reward call: a round's first call, then its refills

    def reward(completion_ids, idx, trainer_state, **kwargs):
        calls.append((trainer_state.global_step, len(idx)))
        return [float(ids[0]) if i % 4 else 1.0 for ids, i in zip(completion_ids, idx)]

    results = {}
    for dynamic in (False, True):
        calls.clear()
        out = tmp_path / str(dynamic)
        args = small_config(
            out,
            max_steps=3,
            dynamic_sampling=dynamic,
            steps_per_generation=2,
            gradient_accumulation_steps=2,
            temperature=2.0,
            log_completions=True,
        )
        trainer = GRPOTrainer(
            tiny_model, reward, args=args, train_dataset=dataset, processing_class=tokenizer
        )
        trainer.train()
        rows = [json.loads(line) for line in open(out / "completions.jsonl")]
        assert len(rows) == 3 * 8  # 3 rounds x 8 completions
        assert {"prompt", "completion", "rewards", "advantage", "step"} <= set(rows[0])
        flat_groups = sum(int(row["prompt"][1:]) % 4 == 0 for row in rows) // 4
        zero_std = [
            log["frac_reward_zero_std"] for log in trainer.state.log_history if "frac_reward_zero_std" in log
        ]
        logs = [log for log in trainer.state.log_history if "loss" in log]
        refilled = [log.get("dynamic_sampling/refilled_groups") for log in logs]
        first_call = {}
        for step, rows in calls:
            first_call.setdefault(step, rows)
        refill_rows = sum(rows for _, rows in calls) - sum(first_call.values())
        results[dynamic] = (flat_groups, sum(zero_std) / len(zero_std), refilled, refill_rows)
    assert results[False][0] >= 1  # without refills, flat groups are trained on (zero advantage)
    assert results[True][0] == 0  # every flat group was replaced by a group of a later prompt
    assert results[True][1] == 0.0 < results[False][1]
    # one log per round: the logged count is exactly the groups the refill calls scored (G=4 rows each)
    assert results[False][2:] == ([None, None, None], 0)  # no refills, and no refill metric
    assert sum(results[True][2]) == results[True][3] / 4 >= 1


def test_grpo_evaluation_generates_and_returns_a_loss(
    tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a
):
    args = small_config(tmp_path, per_device_eval_batch_size=2)
    trainer = GRPOTrainer(
        tiny_model,
        reward_a,
        args=args,
        train_dataset=prompts_dataset,
        eval_dataset=prompts_dataset.select(range(4)),
        processing_class=tokenizer,
    )
    metrics = trainer.evaluate()
    assert math.isfinite(metrics["eval_loss"])
    # the windowed eval metrics reach both the log and evaluate()'s return value
    assert 0.0 <= metrics["eval_reward"] == trainer.state.log_history[-1]["eval_reward"] <= 1.0


def test_grpo_peft_policy_uses_its_base_as_reference(
    tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a
):
    peft = pytest.importorskip("peft")
    model = peft.get_peft_model(tiny_model, peft.LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    trainer = GRPOTrainer(
        model,
        reward_a,
        args=small_config(tmp_path, max_steps=2, beta=0.5),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    assert trainer.ref_model is None  # no copy: adapter disabled instead
    trainer.train()
    assert "kl" in trainer.state.log_history[0]


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            dict(per_device_train_batch_size=3, num_generations=2),
            r"per_device_train_batch_size \(3\) x processes \(1\) x steps_per_generation \(1\) = 3 "
            r".* num_generations \(2\)",
        ),
        (dict(num_generations=1), r"num_generations must be >= 2.*got 1"),
        (dict(num_iterations=0), r"num_iterations must be >= 1, got 0"),
        (dict(steps_per_generation=0), r"steps_per_generation must be >= 1, got 0"),
        (dict(loss_type="ppo"), r"loss_type='ppo' is not supported; choose one of grpo, bnpo, dr_grpo, dapo"),
        (dict(scale_rewards="rank"), r"scale_rewards='rank'"),
        (dict(importance_sampling_level="word"), r"importance_sampling_level='word'"),
        (dict(temperature=0.0), r"temperature must be > 0"),
        (dict(beta=-1.0), r"beta must be >= 0"),
    ],
)
def test_grpo_config_rejects_bad_combinations(tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        small_config(tmp_path, **overrides)


def test_grpo_config_maps_boolean_scale_rewards(tmp_path):
    assert small_config(tmp_path, scale_rewards=False).scale_rewards == "none"
    assert small_config(tmp_path, gradient_accumulation_steps=3).steps_per_generation == 3


def test_grpo_too_few_prompts_for_a_round(tmp_path, tokenizer, tiny_model, reward_a):
    dataset = Dataset.from_dict({"prompt": ["a", "b"]})
    args = small_config(tmp_path, steps_per_generation=4, max_steps=1)  # 4 x 4 / 4 = 4 prompts per round
    trainer = GRPOTrainer(tiny_model, reward_a, args=args, train_dataset=dataset, processing_class=tokenizer)
    with pytest.raises(ValueError, match="has 2 prompts but one generation round needs 4"):
        trainer.train()


def test_grpo_dataset_without_prompt_column(tmp_path, tokenizer, tiny_model, reward_a):
    with pytest.raises(ValueError, match="needs a 'prompt' column; it has \\['text'\\]"):
        GRPOTrainer(
            tiny_model,
            reward_a,
            args=small_config(tmp_path),
            train_dataset=Dataset.from_dict({"text": ["x"]}),
            processing_class=tokenizer,
        )


def test_grpo_reward_weights_length_mismatch(tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a):
    with pytest.raises(
        ValueError,
        match="reward_weights has 2 entries but there are 1 reward functions \\(char_fraction_a\\)",
    ):
        GRPOTrainer(
            tiny_model,
            reward_a,
            args=small_config(tmp_path, reward_weights=[1.0, 2.0]),
            train_dataset=prompts_dataset,
            processing_class=tokenizer,
        )


def _raises(**kwargs):
    raise KeyError("answer")


def _wrong_length(prompts, **kwargs):
    return [0.0]


def _wrong_type(prompts, **kwargs):
    return "good"


def _wrong_item(prompts, **kwargs):
    return ["high"] * len(prompts)


@pytest.mark.parametrize(
    ("func", "message"),
    [
        (_raises, r"reward function '_raises' raised KeyError: 'answer'"),
        (_wrong_length, r"reward function '_wrong_length' returned 1 rewards for 4 completions"),
        (
            _wrong_type,
            r"reward function '_wrong_type' returned str \('good'\); it must return a list of 4 floats",
        ),
        (_wrong_item, r"reward function '_wrong_item' returned str \('high'\) at row 0"),
    ],
)
def test_grpo_bad_reward_function_names_itself(
    tmp_path, tokenizer, tiny_model, prompts_dataset, func, message
):
    trainer = GRPOTrainer(
        tiny_model,
        func,
        args=small_config(tmp_path, max_steps=1),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    with pytest.raises(RewardError, match=message):
        trainer.train()


def test_grpo_missing_tokenizer_and_reward_model_tokenizer(
    tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a
):
    with pytest.raises(ValueError, match="needs processing_class"):
        GRPOTrainer(tiny_model, reward_a, args=small_config(tmp_path), train_dataset=prompts_dataset)
    reward_model = torch.nn.Linear(2, 1)
    with pytest.raises(ValueError, match="reward model 'Linear' needs a tokenizer"):
        GRPOTrainer(
            tiny_model,
            reward_model,
            args=small_config(tmp_path),
            train_dataset=prompts_dataset,
            processing_class=tokenizer,
        )


def test_grpo_model_tags_reach_the_checkpoint_model_card(
    tiny_model, tokenizer, reward_a, prompts_dataset, tmp_path
):
    """As TRL's GRPOTrainer (and our DPOTrainer, through the shared skeleton): every checkpoint writes
    ``output_dir/README.md`` with the model's tags."""
    out = tmp_path / "out"
    trainer = GRPOTrainer(
        tiny_model,
        reward_funcs=reward_a,
        args=small_config(out, max_steps=1, save_strategy="steps", save_steps=1),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    assert {"trl", "grpo"} <= set(trainer.model.model_tags)
    assert not (out / "README.md").exists()
    trainer.train()
    card = (out / "README.md").read_text()
    assert "- trl" in card and "- grpo" in card
    assert (out / "checkpoint-1").is_dir()
