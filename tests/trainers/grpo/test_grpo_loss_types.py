"""The loss types and loss options TRL 1.16 added (cispo, sapo, luspo, vespo, delta, off-policy masking,
the entropy bonus and the high-entropy token mask): by hand, then against TRL's ``_compute_loss`` on
identical inputs (loss, gradients and logged statistics)."""

from __future__ import annotations

import math

import pytest
import torch

from trainwright import GRPOTrainer
from trainwright.trainers.common.logprobs import token_logps_and_entropy
from trainwright.trainers.grpo.entropy import high_entropy_mask
from trainwright.trainers.grpo.loss import LossSettings, grpo_loss, off_policy_mask
from trainwright.trainers.grpo.loss_types import vespo_weights

from .grpo_settings import completion_logits


@pytest.fixture
def loss_inputs():
    logps = torch.tensor([[-1.0, -2.0, -0.5], [-0.3, -1.2, -2.0]], requires_grad=True)
    old = torch.tensor([[-1.1, -1.5, -0.5], [-0.3, -1.0, -2.5]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    adv = torch.tensor([1.5, -0.7])
    return logps, old, mask.float(), adv


# ---------------------------------------------------------------- by hand
def test_cispo_clips_the_weight_and_keeps_the_log_prob_gradient(loss_inputs):
    logps, old, m, adv = loss_inputs
    ratio = torch.exp(logps.detach() - old)
    weight = ratio.clamp(max=1.1)  # ε_max = epsilon_high
    expected = (-weight * adv[:, None] * logps * m).sum() / 4.0
    out = grpo_loss(
        logps, adv, m, loss_type="cispo", old_per_token_logps=old, epsilon_high=1.1, tokens_per_micro_step=4.0
    )
    torch.testing.assert_close(out.loss, expected)
    out.loss.backward()
    torch.testing.assert_close(logps.grad, -weight * adv[:, None] * m / 4.0)  # no gradient through the weight
    clipped = ((ratio > 1.1) & (adv[:, None] > 0)).float()
    torch.testing.assert_close(out.mean("cispo_clip_ratio"), (clipped * m).sum() / m.sum())


def test_sapo_soft_gate_by_hand(loss_inputs):
    logps, old, m, adv = loss_inputs
    ratio = torch.exp(logps - old)
    tau = torch.tensor([[1.0], [1.05]])  # A > 0 -> sapo_temperature_pos, else _neg
    ell = -(torch.sigmoid(tau * (ratio - 1)) * 4 / tau) * adv[:, None]
    expected = ((ell * m).sum(1) / m.sum(1)).mean()  # grpo's per-sequence aggregation
    out = grpo_loss(logps, adv, m, loss_type="sapo", old_per_token_logps=old)
    torch.testing.assert_close(out.loss, expected)
    # at r = 1 the gate is σ(0)·4/τ = 2/τ, its slope σ'(0)·4 = 1: the policy gradient of GRPO
    on_policy = grpo_loss(logps, adv, m, loss_type="sapo")
    torch.testing.assert_close(on_policy.loss, ((-(2 / tau) * adv[:, None] * m).sum(1) / m.sum(1)).mean())


def test_luspo_weights_each_sequence_by_its_length(loss_inputs):
    logps, old, m, adv = loss_inputs
    seq_ratio = torch.exp(((logps - old) * m).sum(1) / m.sum(1))[:, None]
    a = adv[:, None]
    ell = -torch.min(seq_ratio * a, seq_ratio.clamp(0.8, 1.2) * a)
    expected = (ell * m).sum(1).mean()  # Σ_t, not mean_t: a 3-token sequence counts 3/2 of a 2-token one
    out = grpo_loss(
        logps, adv, m, loss_type="luspo", old_per_token_logps=old, importance_sampling_level="sequence"
    )
    torch.testing.assert_close(out.loss, expected)


def test_vespo_gamma_weight_by_hand():
    settings = LossSettings()
    log_ratio = torch.tensor([[0.0, 0.0], [0.1, 0.2], [-0.3, 0.0]])
    mask = torch.ones(3, 2)
    adv = torch.tensor([[1.0], [1.0], [-1.0]])
    phi = vespo_weights(adv, log_ratio, mask, settings)
    w = torch.exp(log_ratio.sum(1))  # the sequence ratio Π_t r_t
    k = torch.tensor([2.0, 2.0, 3.0])
    lam = torch.tensor([3.0, 3.0, 2.0])
    torch.testing.assert_close(phi[:, 0], torch.exp(lam) * w**k * torch.exp(-lam * w))
    assert phi[0].item() == pytest.approx(1.0)  # φ(1) = 1: on-policy, plain policy gradient


def test_delta_caps_the_unclipped_ratio(loss_inputs):
    _, _, m, _ = loss_inputs
    logps = torch.log(torch.tensor([[3.0, 1.0, 1.0], [0.5, 1.0, 1.0]]))
    old = torch.zeros(2, 3)
    adv = torch.tensor([-1.0, 1.0])
    # A < 0 with r = 3: -min(r·A, clip(r)·A) = r = 3 unclipped; delta caps it at 2
    plain = grpo_loss(logps, adv, m, loss_type="bnpo", old_per_token_logps=old)
    capped = grpo_loss(logps, adv, m, loss_type="bnpo", old_per_token_logps=old, delta=2.0)
    assert (plain.loss - capped.loss).item() * m.sum().item() == pytest.approx(1.0, abs=1e-5)


def test_off_policy_mask_by_hand():
    # TRL's rule: keep if A >= 0 or mean_t(log π_old − log π_θ) <= δ; padding ignored
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    old = torch.zeros(3, 3)
    logps = torch.tensor([[-2.0, -2.0, 1e4], [-0.5, -0.5, -0.5], [-2.0, -2.0, -2.0]])
    adv = torch.tensor([-1.0, -1.0, 1.0])
    keep = off_policy_mask(adv, logps, old, mask, threshold=1.0)
    assert keep[:, 0].tolist() == [0.0, 1.0, 1.0]
    assert GRPOTrainer.get_off_policy_mask(adv[:, None], logps, old, mask, 1.0).tolist() == keep.tolist()


def test_entropy_bonus_is_the_mean_token_entropy_for_every_loss_type(loss_inputs):
    logps, old, m, adv = loss_inputs
    entropies = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    token_mask = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    for loss_type in ("grpo", "dapo", "dr_grpo", "luspo", "cispo"):
        kwargs = {
            "loss_type": loss_type,
            "old_per_token_logps": old,
            "tokens_per_micro_step": 5.0,
            "max_completion_length": 8,
        }
        out = grpo_loss(logps, adv, m, token_mask=token_mask, entropies=entropies, entropy_coef=0.5, **kwargs)
        effective = m * token_mask  # the bonus acts on the tokens the policy term acts on
        bonus = (entropies * effective).sum() / effective.sum()
        torch.testing.assert_close(out.loss, out.policy_loss - 0.5 * bonus, msg=loss_type)
        torch.testing.assert_close(out.mean("entropy"), (entropies * m).sum() / m.sum())  # logged over all


def test_high_entropy_mask_by_hand():
    entropies = torch.tensor([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.7, 0.8, 0.9, 1.0, 1.1, 1.2]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
    pooled = entropies[mask.bool()]
    top = high_entropy_mask(entropies, mask, pooled, quantile=0.8)  # the top 20 % of 10 active tokens
    assert top.long().tolist() == [[0, 0, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]]  # padding never counts
    assert high_entropy_mask(entropies, mask, pooled, 0.0).long().tolist() == mask.tolist()
    assert not high_entropy_mask(entropies, mask, pooled[:0], 0.5).any()


# ---------------------------------------------------------------- TRL parity
def _configure_trl(trainer, loss_type, level, beta, options):
    trainer.loss_type, trainer.importance_sampling_level, trainer.beta = loss_type, level, beta
    trainer.args.delta = options.get("delta")
    trainer.off_policy_mask_threshold = options.get("off_policy_mask_threshold")
    trainer.top_entropy_quantile = options.get("top_entropy_quantile", 1.0)
    trainer.entropy_coef = options.get("entropy_coef", 0.0)
    trainer._entropy_bonus_enabled = trainer.entropy_coef != 0.0
    trainer.use_adaptive_entropy = False
    for metrics in trainer._metrics.values():
        metrics.clear()


CASES = [
    ("cispo", "token", 0.0, {}),
    ("cispo", "sequence", 0.04, {}),
    ("sapo", "token", 0.0, {}),
    ("sapo", "sequence", 0.04, {}),
    ("luspo", "sequence", 0.0, {}),
    ("luspo", "token", 0.04, {}),
    ("vespo", "token", 0.0, {}),
    ("vespo", "token", 0.04, {}),
    ("dapo", "token", 0.0, {"delta": 1.1}),
    ("grpo", "token", 0.04, {"off_policy_mask_threshold": 0.05}),
    ("bnpo", "token", 0.04, {"entropy_coef": 0.3}),
    ("dapo", "token", 0.0, {"top_entropy_quantile": 0.5}),
    ("grpo", "sequence", 0.0, {"top_entropy_quantile": 0.5, "entropy_coef": 0.2}),
]


@pytest.mark.parametrize(("loss_type", "level", "beta", "options"), CASES)
def test_loss_option_equals_trl_on_identical_inputs(trl_setup, loss_type, level, beta, options):
    trainer, our_model, base_inputs = trl_setup
    with torch.no_grad():
        current = torch.log_softmax(completion_logits(our_model, base_inputs), -1)
        current = current.gather(-1, base_inputs["completion_ids"][..., None])[..., 0]
    generator = torch.Generator().manual_seed(1)
    inputs = dict(base_inputs)
    inputs["old_per_token_logps"] = current + 0.3 * torch.randn(current.shape, generator=generator)
    inputs["ref_per_token_logps"] = current + 0.2 * torch.randn(current.shape, generator=generator)
    active = inputs["completion_mask"].sum()
    inputs["num_items_in_batch"] = active
    _configure_trl(trainer, loss_type, level, beta, options)
    trainer.model.zero_grad()
    trl_loss = trainer._compute_loss(trainer.model, inputs)
    trl_loss.backward()
    trl_metrics = {name: values[-1] for name, values in trainer._metrics["train"].items()}
    trl_metrics.update({name: values[-1] for name, values in trainer._metrics["eval"].items()})

    our_model.zero_grad()
    coef = options.get("entropy_coef", 0.0)
    logps, entropies = token_logps_and_entropy(
        completion_logits(our_model, inputs), inputs["completion_ids"], entropy_grad=coef != 0.0
    )
    mask = inputs["completion_mask"]
    quantile = options.get("top_entropy_quantile", 1.0)
    token_mask = None
    if quantile < 1.0:
        token_mask = high_entropy_mask(entropies, mask, entropies[mask.bool()].detach(), 1.0 - quantile)
    settings = LossSettings(
        loss_type=loss_type,
        beta=beta,
        epsilon_low=0.2,
        epsilon_high=0.28,
        delta=options.get("delta"),
        importance_sampling_level=level,
        max_completion_length=6,
        off_policy_mask_threshold=options.get("off_policy_mask_threshold"),
    )
    ours = grpo_loss(
        logps,
        inputs["advantages"],
        mask,
        settings,
        old_per_token_logps=inputs["old_per_token_logps"],
        ref_per_token_logps=inputs["ref_per_token_logps"],
        tokens_per_micro_step=active.float(),
        token_mask=token_mask,
        entropies=entropies,
        entropy_coef=coef,
    )
    ours.loss.backward()
    torch.testing.assert_close(ours.loss, trl_loss, rtol=1e-5, atol=1e-6)
    trl_params = dict(trainer.model.named_parameters())
    for name, param in our_model.named_parameters():
        torch.testing.assert_close(param.grad, trl_params[name].grad, rtol=1e-4, atol=1e-6, msg=name)

    mine = {name: ours.mean(name).item() for name in ours.means}
    for name, values in ours.per_sequence.items():
        valid = values[~torch.isnan(values)]
        mine[name] = (valid.min() if name.endswith("_min") else valid.max()).item()
    if coef:
        mine["policy_loss"] = ours.policy_loss.item()
        mine["entropy_coef"] = coef
    assert set(mine) == set(trl_metrics)
    for name, value in trl_metrics.items():
        assert mine[name] == pytest.approx(value, rel=1e-5, abs=1e-6), name
        assert not math.isnan(value)


def test_get_high_entropy_mask_equals_trl(
    trl_setup, tmp_path, tokenizer, tiny_model, reward_a, prompts_dataset
):
    from .grpo_settings import small_config

    trainer, _, _ = trl_setup
    ours = GRPOTrainer(
        tiny_model,
        reward_a,
        args=small_config(tmp_path),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    generator = torch.Generator().manual_seed(4)
    entropies = torch.rand(5, 7, generator=generator) * 3
    mask = (torch.rand(5, 7, generator=generator) > 0.3).long()
    for threshold in (0.0, 0.2, 0.5, 0.8, 1.0):
        expected = trainer.get_high_entropy_mask(entropies, mask, threshold)
        assert torch.equal(ours.get_high_entropy_mask(entropies, mask, threshold), expected), threshold
