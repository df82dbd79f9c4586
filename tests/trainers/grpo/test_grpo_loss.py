"""Advantages and every loss type against hand-written tensors (formula in the test), and against TRL."""

from __future__ import annotations

import math

import pytest
import torch

from trainwright.trainers.grpo.advantages import (
    combine_rewards,
    compute_advantages,
    normalize_then_sum_advantages,
    round_advantages,
)
from trainwright.trainers.grpo.loss import grpo_loss
from trainwright.trainers.grpo.metrics import completion_metrics, reward_metrics

from .grpo_settings import our_logps

EPS = 1e-4


# ---------------------------------------------------------------- advantages
def test_grpo_advantages_group_scaling_by_hand():
    rewards = torch.tensor([1.0, 2.0, 3.0, 6.0, 0.0, 0.0, 0.0, 0.0])
    result = compute_advantages(rewards, num_generations=4, scale_rewards="group")
    # group 1: mean 3, sample std sqrt(((-2)^2 + 1 + 0 + 9) / 3) = sqrt(14/3); group 2: all equal
    std1 = math.sqrt(14 / 3)
    expected = torch.tensor([-2 / (std1 + EPS), -1 / (std1 + EPS), 0.0, 3 / (std1 + EPS), 0, 0, 0, 0])
    torch.testing.assert_close(result.advantages, expected)
    assert result.zero_std.tolist() == [False] * 4 + [True] * 4


def test_grpo_advantages_batch_and_none_scaling_by_hand():
    rewards = torch.tensor([1.0, 3.0, 10.0, 14.0])
    centred = torch.tensor([-1.0, 1.0, -2.0, 2.0])  # R - group mean (2, 12)
    batch_std = rewards.std()  # Bessel over the whole batch
    torch.testing.assert_close(
        compute_advantages(rewards, 2, "batch").advantages, centred / (batch_std + EPS)
    )
    torch.testing.assert_close(compute_advantages(rewards, 2, "none").advantages, centred)


def test_grpo_none_rewards_are_skipped_per_function():
    # function 0 returned None for row 1; every function returned None for row 3
    per_func = torch.tensor([[1.0, 2.0], [math.nan, 4.0], [3.0, math.nan], [math.nan, math.nan]])
    combined = combine_rewards(per_func, torch.tensor([1.0, 0.5]))
    assert combined[:3].tolist() == [2.0, 2.0, 3.0]
    assert math.isnan(combined[3])
    advantages = compute_advantages(combined, 2, "none").advantages
    assert advantages.tolist() == [0.0, 0.0, 0.0, 0.0]  # group 2: NaN-aware mean 3, row 3 NaN -> 0


def test_grpo_advantages_reject_partial_groups():
    with pytest.raises(ValueError, match="num_generations=4"):
        compute_advantages(torch.zeros(6), 4)


def test_grpo_normalize_then_sum_gdpo_by_hand():
    # two reward functions on very different scales, two groups of 2; function 1 skipped row 1
    per_func = torch.tensor([[1.0, 100.0], [math.nan, 300.0], [0.0, 200.0], [2.0, 200.0]])
    weights = torch.tensor([1.0, 0.5])
    result = normalize_then_sum_advantages(per_func, weights, num_generations=2)
    # per function and group: (r - mean) / (std + eps); a single valid value has NaN std -> NaN, skipped
    s2 = math.sqrt(2.0)  # sample std of two values that differ by 2 (or 200 / 100 = 2 after scaling)
    f1 = [math.nan, math.nan, -1 / (s2 + EPS), 1 / (s2 + EPS)]
    f2 = [-100 / (100 * s2 + EPS), 100 / (100 * s2 + EPS), 0.0, 0.0]  # group 2: equal rewards -> 0
    summed = torch.tensor([0.5 * f2[0], 0.5 * f2[1], f1[2], f1[3]])
    expected = (summed - summed.mean()) / (summed.std() + EPS)
    torch.testing.assert_close(result.advantages, expected)
    assert round_advantages(per_func, weights, 2, "none", "normalize_then_sum").advantages.allclose(expected)
    # the logged reward stays the weighted sum of the raw rewards
    torch.testing.assert_close(result.rewards, torch.tensor([51.0, 150.0, 100.0, 102.0]))


def test_grpo_round_metrics_by_hand():
    per_func = torch.tensor([[1.0, math.nan], [3.0, 2.0], [math.nan, math.nan], [5.0, 4.0]])
    weights = torch.tensor([1.0, 1.0])
    adv = round_advantages(per_func, weights, 2)
    metrics = reward_metrics(per_func, ["a", "b"], weights, adv)
    combined = torch.tensor([1.0, 5.0, 9.0])  # the unscorable row left out
    assert metrics["rewards/a/mean"] == pytest.approx(3.0) and metrics["rewards/a/std"] == pytest.approx(2.0)
    assert metrics["rewards/b/mean"] == pytest.approx(3.0)
    assert metrics["reward"] == pytest.approx(combined.mean().item())
    assert metrics["reward_std"] == pytest.approx(combined.std().item())  # over the round, as TRL
    assert metrics["frac_reward_unscorable"] == 0.25
    assert metrics["frac_reward_zero_std"] == 0.0  # as TRL: group 2 has one valid reward, a NaN std, not zero
    lengths, truncated = torch.tensor([4, 2, 8, 6]), torch.tensor([False, False, True, False])
    assert completion_metrics(lengths, truncated) == {
        "completions/mean_length": 5.0,
        "completions/min_length": 2.0,
        "completions/max_length": 8.0,
        "completions/clipped_ratio": 0.25,
        "completions/mean_terminated_length": 4.0,
        "completions/min_terminated_length": 2.0,
        "completions/max_terminated_length": 6.0,
    }


# ---------------------------------------------------------------- loss types by hand
@pytest.fixture
def loss_inputs():
    logps = torch.tensor([[-1.0, -2.0, -0.5], [-0.3, -1.2, -2.0]], requires_grad=True)
    old = torch.tensor([[-1.1, -1.5, -0.5], [-0.3, -1.0, -2.5]])
    ref = torch.tensor([[-0.9, -2.2, -0.7], [-0.4, -1.1, -1.9]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    adv = torch.tensor([1.5, -0.7])
    return logps, old, ref, mask, adv


def _clipped_terms(logps, old, adv, eps_low, eps_high):
    ratio = torch.exp(logps - old)
    a = adv[:, None]
    return -torch.min(ratio * a, torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * a), ratio


def test_grpo_loss_types_by_hand(loss_inputs):
    logps, old, _, mask, adv = loss_inputs
    ell, _ = _clipped_terms(logps, old, adv, 0.2, 0.28)
    m = mask.float()
    expected = {
        "grpo": ((ell * m).sum(1) / m.sum(1)).mean(),  # per-sequence token mean, then batch mean
        "bnpo": (ell * m).sum() / m.sum(),  # token mean over the micro-batch
        "dr_grpo": (ell * m).sum() / (2 * 8),  # B * max_completion_length
        "dapo": (ell * m).sum() / 7.5,  # tokens_per_micro_step given
    }
    for loss_type, value in expected.items():
        out = grpo_loss(
            logps,
            adv,
            mask,
            loss_type=loss_type,
            old_per_token_logps=old,
            epsilon_low=0.2,
            epsilon_high=0.28,
            max_completion_length=8,
            tokens_per_micro_step=7.5,
        )
        torch.testing.assert_close(out.loss, value, msg=loss_type)


def test_grpo_loss_ratio_one_without_old_logps_still_has_gradient(loss_inputs):
    logps, _, _, mask, adv = loss_inputs
    out = grpo_loss(logps, adv, mask, loss_type="bnpo")
    m = mask.float()
    torch.testing.assert_close(out.loss, (-adv[:, None] * m).sum() / m.sum())
    out.loss.backward()
    # d/dlogp of -r·A at r = 1 is -A per active token / token count
    torch.testing.assert_close(logps.grad, -adv[:, None].expand_as(m) * m / m.sum())


def test_grpo_sequence_level_importance_ratio_gspo(loss_inputs):
    logps, old, _, mask, adv = loss_inputs
    m = mask.float()
    seq_log_ratio = ((logps - old) * m).sum(1) / m.sum(1)
    ratio = torch.exp(seq_log_ratio)[:, None]
    a = adv[:, None]
    ell = -torch.min(ratio * a, torch.clamp(ratio, 0.8, 1.2) * a).expand_as(m)
    out = grpo_loss(
        logps, adv, mask, loss_type="bnpo", old_per_token_logps=old, importance_sampling_level="sequence"
    )
    torch.testing.assert_close(out.loss, (ell * m).sum() / m.sum())


@pytest.mark.parametrize("bias_correction", [True, False])
def test_grpo_kl_term_k3_by_hand(loss_inputs, bias_correction):
    logps, old, ref, mask, adv = loss_inputs
    m = mask.float()
    ell, ratio = _clipped_terms(logps, old, adv, 0.2, 0.2)
    kl = torch.exp(ref - logps) - (ref - logps) - 1
    if bias_correction:
        kl = kl * ratio
    expected = ((ell + 0.05 * kl) * m).sum() / m.sum()
    out = grpo_loss(
        logps,
        adv,
        mask,
        loss_type="bnpo",
        old_per_token_logps=old,
        ref_per_token_logps=ref,
        beta=0.05,
        use_bias_correction_kl=bias_correction,
    )
    torch.testing.assert_close(out.loss, expected)
    torch.testing.assert_close(out.kl, (kl * m).sum() / m.sum())


def test_grpo_clip_ratios_by_hand():
    logps = torch.log(torch.tensor([[0.5, 1.5, 1.0], [0.5, 1.5, 1.0]]))
    old = torch.zeros(2, 3)
    mask = torch.ones(2, 3)
    adv = torch.tensor([1.0, -1.0])
    out = grpo_loss(logps, adv, mask, loss_type="bnpo", old_per_token_logps=old)
    # high clip: r=1.5 > 1.2 with A>0 (row 0); low clip: r=0.5 < 0.8 with A<0 (row 1)
    assert out.high_clip.item() == pytest.approx(1 / 6)
    assert out.low_clip.item() == pytest.approx(1 / 6)
    assert out.region_clip.item() == pytest.approx(2 / 6)


def test_grpo_loss_bad_inputs_name_the_problem(loss_inputs):
    logps, _, _, mask, adv = loss_inputs
    with pytest.raises(ValueError, match="loss_type='ppo'"):
        grpo_loss(logps, adv, mask, loss_type="ppo")
    with pytest.raises(ValueError, match="dr_grpo.*max_completion_length"):
        grpo_loss(logps, adv, mask, loss_type="dr_grpo")
    with pytest.raises(ValueError, match="dapo.*tokens_per_micro_step"):
        grpo_loss(logps, adv, mask, loss_type="dapo")
    with pytest.raises(ValueError, match="ref_per_token_logps"):
        grpo_loss(logps, adv, mask, loss_type="bnpo", beta=0.1)


# ---------------------------------------------------------------- TRL parity
@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dr_grpo", "dapo"])
@pytest.mark.parametrize("level", ["token", "sequence"])
@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_grpo_loss_equals_trl_on_identical_inputs(trl_setup, loss_type, level, beta):
    trainer, our_model, base_inputs = trl_setup
    with torch.no_grad():
        current = our_logps(our_model, base_inputs)
    generator = torch.Generator().manual_seed(1)
    inputs = dict(base_inputs)
    inputs["old_per_token_logps"] = current + 0.3 * torch.randn(current.shape, generator=generator)
    inputs["ref_per_token_logps"] = current + 0.2 * torch.randn(current.shape, generator=generator)
    active = inputs["completion_mask"].sum()
    inputs["num_items_in_batch"] = active  # TRL: active tokens of the generation round, all processes
    trainer.loss_type, trainer.importance_sampling_level, trainer.beta = loss_type, level, beta
    trl_loss = trainer._compute_loss(trainer.model, inputs)

    ours = grpo_loss(
        our_logps(our_model, inputs),
        inputs["advantages"],
        inputs["completion_mask"],
        loss_type=loss_type,
        old_per_token_logps=inputs["old_per_token_logps"],
        ref_per_token_logps=inputs["ref_per_token_logps"],
        beta=beta,
        epsilon_low=0.2,
        epsilon_high=0.28,
        importance_sampling_level=level,
        max_completion_length=6,
        tokens_per_micro_step=active.float(),  # 1 process, steps_per_generation 1
    )
    torch.testing.assert_close(ours.loss, trl_loss, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("loss_type", ["grpo", "dapo"])
def test_grpo_loss_with_shared_prompt_forward_equals_trl(trl_setup, loss_type):
    """Completions of the same prompt: running each distinct prompt once (the trainer's shared-prompt
    forward) gives TRL's loss, whose forward runs every row in full."""
    from trainwright.trainers.common.logprobs import (
        SharedPrefix,
        distinct_rows,
        kv_cache_argument,
        selective_log_softmax,
        shared_prefix_logits,
    )

    trainer, our_model, base_inputs = trl_setup
    inputs = dict(base_inputs)
    # two prompts (one left-padded), two completions each
    inputs["prompt_ids"] = base_inputs["prompt_ids"][[0, 0, 3, 3]]
    inputs["prompt_mask"] = base_inputs["prompt_mask"][[0, 0, 3, 3]]
    active = inputs["completion_mask"].sum()
    inputs["num_items_in_batch"] = active
    inputs.pop("old_per_token_logps", None)
    inputs.pop("ref_per_token_logps", None)
    trainer.loss_type, trainer.importance_sampling_level, trainer.beta = loss_type, "token", 0.0
    trl_loss = trainer._compute_loss(trainer.model, inputs)

    rows, inverse = distinct_rows(inputs["prompt_ids"], inputs["prompt_mask"])
    assert rows.numel() == 2
    input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
    prefix = SharedPrefix(inputs["prompt_ids"].shape[1], rows, inverse)
    pieces = shared_prefix_logits(our_model, input_ids, mask, prefix, kv_cache_argument(our_model))
    targets = inputs["completion_ids"].split([p.shape[1] for p in pieces], dim=1)
    logps = torch.cat([selective_log_softmax(p, t) for p, t in zip(pieces, targets)], dim=1)
    ours = grpo_loss(
        logps,
        inputs["advantages"],
        inputs["completion_mask"],
        loss_type=loss_type,
        epsilon_low=0.2,
        epsilon_high=0.28,
        tokens_per_micro_step=active.float(),
    )
    torch.testing.assert_close(ours.loss, trl_loss, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("scale_rewards", ["group", "batch", "none"])
@pytest.mark.parametrize("num_generations", [1, 2, 4])
def test_grpo_frac_reward_zero_std_as_trl_computes_it(scale_rewards, num_generations):
    """Issue 37 item 3: TRL's ``is_std_zero`` (its own ``nanstd``, its branches) is the oracle."""
    trl_utils = pytest.importorskip("trl.trainer.utils")
    nan = math.nan
    for values in (
        [1.0, 1.0, 2.0, 2.0, 3.0, nan, 4.0, 4.0],
        [2.0] * 8,
        [nan, nan, 1.0, 5.0, 0.0, 0.0, 7.0, 7.0],
    ):
        rewards = torch.tensor(values)
        if scale_rewards == "batch":
            std = trl_utils.nanstd(rewards).expand_as(rewards)
        elif num_generations > 1:
            std = trl_utils.nanstd(rewards.view(-1, num_generations), dim=1).repeat_interleave(
                num_generations
            )
        else:
            std = torch.zeros_like(rewards)
        expected = torch.isclose(std, torch.zeros_like(std)).float().mean().item()
        ours = round_advantages(rewards[:, None], torch.ones(1), num_generations, scale_rewards).frac_zero_std
        assert ours == pytest.approx(expected), (values, ours, expected)
