"""GRPO's advantages and loss family, as pure tensor functions (no trainer state).

Notation: a generation round holds groups of G completions of the same prompt; ``R_i`` is the
weighted reward of completion ``i``, ``M_it`` its completion mask, ``π_θ`` the policy being trained,
``π_old`` the policy that sampled the completions, ``π_ref`` the frozen reference.

Advantages (GRPO, Shao et al. 2024, "DeepSeekMath", arXiv:2402.03300; Dr. GRPO, Liu et al. 2025,
arXiv:2503.20783, for ``scale_rewards="none"``)::

    A_i = (R_i − mean_group(R)) / (σ + 1e-4)      σ = group std ("group"), batch std ("batch"), 1 ("none")

Per-token surrogate (PPO's clipped objective, Schulman et al. 2017, arXiv:1707.06347; the asymmetric
``ε_high`` is DAPO's clip-higher, Yu et al. 2025, arXiv:2503.14476)::

    r_t = exp(log π_θ − log π_old)                 token level
    r   = exp(Σ_t M_t (log π_θ − log π_old) / Σ_t M_t)   sequence level
          (GSPO, Zheng et al. 2025, arXiv:2507.18071)
    ℓ_t = −min(r_t A, clip(r_t, 1 − ε_low, 1 + ε_high) A)  + β · KL_t

KL to the reference with the k3 estimator (Schulman 2020, "Approximating KL divergence"), optionally
multiplied by ``r_t`` so that its gradient is unbiased off-policy (as TRL's ``use_bias_correction_kl``)::

    KL_t = exp(log π_ref − log π_θ) − (log π_ref − log π_θ) − 1

Aggregation over a micro-batch of B sequences (the Trainer then divides by gradient accumulation):

* ``grpo``:    mean_i [ Σ_t ℓ_it M_it / Σ_t M_it ]    (length-normalised per sequence; DeepSeekMath)
* ``bnpo``:    Σ ℓ M / Σ M                            (token mean over the micro-batch)
* ``dr_grpo``: Σ ℓ M / (B · max_completion_length)    (constant normaliser, no length bias; Dr. GRPO)
* ``dapo``:    Σ ℓ M / N̄                              (token mean over the accumulation window; DAPO)
  where ``N̄`` = active tokens of the whole generation round on all processes
  ÷ (processes × steps_per_generation),
  the average number of tokens one micro-step sees, so that every token weighs the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

ADVANTAGE_EPS = 1e-4


@dataclass
class AdvantageResult:
    """Advantages plus the statistics the trainer logs."""

    advantages: torch.Tensor  # (N,)
    rewards: torch.Tensor  # (N,) weighted sum per completion (NaN where every function returned None)
    group_std: torch.Tensor  # (N,) the std of each completion's group, broadcast
    zero_std: torch.Tensor  # (N,) bool: the group's rewards all agree (no learning signal)


def combine_rewards(rewards_per_func: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``R_i = Σ_k w_k r_ik`` skipping NaN (a reward function returned ``None`` for that row).

    A row where *every* function returned ``None`` stays NaN and gets advantage 0.
    """
    if rewards_per_func.dim() != 2 or rewards_per_func.shape[1] != weights.numel():
        raise ValueError(
            f"rewards_per_func {tuple(rewards_per_func.shape)} must be (N, {weights.numel()}) "
            f"for {weights.numel()} weights"
        )
    weighted = rewards_per_func * weights.to(rewards_per_func)
    total = torch.nansum(weighted, dim=1)
    all_missing = torch.isnan(rewards_per_func).all(dim=1)
    return torch.where(all_missing, torch.full_like(total, float("nan")), total)


def _nanstd(values: torch.Tensor, dim: int) -> torch.Tensor:
    """Sample standard deviation (Bessel's n−1, as ``torch.std``) ignoring NaN; NaN for < 2 values."""
    count = (~torch.isnan(values)).sum(dim=dim, keepdim=True)
    mean = torch.nanmean(values, dim=dim, keepdim=True)
    squares = torch.nansum((values - mean) ** 2, dim=dim, keepdim=True)
    var = squares / (count - 1).clamp(min=1)
    var = torch.where(count > 1, var, torch.full_like(var, float("nan")))
    return var.sqrt().squeeze(dim)


def compute_advantages(
    rewards: torch.Tensor, num_generations: int, scale_rewards: str = "group"
) -> AdvantageResult:
    """Group-relative advantages of ``rewards`` (N,), laid out as consecutive groups of G.

    ``A_i = R_i − mean_g(R)``, divided by ``σ + 1e-4`` unless ``scale_rewards == "none"``; σ is the
    group std (``"group"``) or the std over all N rewards (``"batch"``). Stds use Bessel's correction
    and ignore NaN rewards; NaN advantages become 0.
    """
    if rewards.dim() != 1 or rewards.numel() % num_generations != 0:
        raise ValueError(
            f"rewards of shape {tuple(rewards.shape)} cannot be split into groups of "
            f"num_generations={num_generations}"
        )
    grouped = rewards.view(-1, num_generations)
    group_mean = torch.nanmean(grouped, dim=1, keepdim=True)
    group_std = _nanstd(grouped, dim=1)
    centred = (grouped - group_mean).reshape(-1)
    group_std_flat = group_std.repeat_interleave(num_generations)
    if scale_rewards == "group":
        advantages = centred / (group_std_flat + ADVANTAGE_EPS)
    elif scale_rewards == "batch":
        advantages = centred / (_nanstd(rewards, dim=0) + ADVANTAGE_EPS)
    elif scale_rewards == "none":
        advantages = centred
    else:
        raise ValueError(f"scale_rewards={scale_rewards!r}; choose 'group', 'batch' or 'none'")
    zero_std = torch.isclose(group_std_flat, torch.zeros_like(group_std_flat)) | torch.isnan(group_std_flat)
    return AdvantageResult(
        advantages=torch.nan_to_num(advantages, nan=0.0),
        rewards=rewards,
        group_std=group_std_flat,
        zero_std=zero_std,
    )


@dataclass
class LossOutput:
    """The micro-batch loss (before the Trainer's division by gradient accumulation) and its statistics."""

    loss: torch.Tensor
    kl: torch.Tensor | None  # masked mean of KL_t over the micro-batch
    low_clip: torch.Tensor  # fraction of active tokens clipped at 1 − ε_low with A < 0
    high_clip: torch.Tensor  # fraction clipped at 1 + ε_high with A > 0
    region_clip: torch.Tensor  # fraction clipped either way


def grpo_loss(
    per_token_logps: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    *,
    loss_type: str = "dapo",
    old_per_token_logps: torch.Tensor | None = None,
    ref_per_token_logps: torch.Tensor | None = None,
    beta: float = 0.0,
    epsilon_low: float = 0.2,
    epsilon_high: float = 0.2,
    importance_sampling_level: str = "token",
    use_bias_correction_kl: bool = True,
    max_completion_length: int | None = None,
    tokens_per_micro_step: float | torch.Tensor | None = None,
) -> LossOutput:
    """The clipped GRPO surrogate (+ β·KL) aggregated by ``loss_type`` (see the module docstring).

    ``per_token_logps``/``old_per_token_logps``/``ref_per_token_logps``/``completion_mask``: (B, T);
    ``advantages``: (B,). ``old_per_token_logps=None`` means the sampling policy is the current one
    (ratio exactly 1, gradient still flows through ``per_token_logps``). ``dr_grpo`` needs
    ``max_completion_length``; ``dapo`` needs ``tokens_per_micro_step`` (N̄ in the docstring).
    """
    mask = completion_mask.to(per_token_logps.dtype)
    adv = advantages.to(per_token_logps.dtype).unsqueeze(1)
    old = per_token_logps.detach() if old_per_token_logps is None else old_per_token_logps
    log_ratio = per_token_logps - old
    if importance_sampling_level == "token":
        log_weights = log_ratio
    elif importance_sampling_level == "sequence":
        log_weights = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    else:
        raise ValueError(
            f"importance_sampling_level={importance_sampling_level!r}; choose 'token' or 'sequence'"
        )
    ratio = torch.exp(log_weights)
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    per_token_loss = -torch.min(ratio * adv, clipped * adv)

    kl_mean = None
    if beta != 0.0:
        if ref_per_token_logps is None:
            raise ValueError("beta != 0 needs ref_per_token_logps")
        delta = ref_per_token_logps - per_token_logps
        per_token_kl = torch.exp(delta) - delta - 1
        if use_bias_correction_kl:
            per_token_kl = per_token_kl * ratio
        per_token_loss = per_token_loss + beta * per_token_kl
        kl_mean = ((per_token_kl * mask).sum() / mask.sum().clamp(min=1.0)).detach()

    if loss_type == "grpo":
        loss = ((per_token_loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    elif loss_type == "bnpo":
        loss = (per_token_loss * mask).sum() / mask.sum().clamp(min=1.0)
    elif loss_type == "dr_grpo":
        if max_completion_length is None:
            raise ValueError("loss_type='dr_grpo' needs max_completion_length")
        loss = (per_token_loss * mask).sum() / (per_token_loss.size(0) * max_completion_length)
    elif loss_type == "dapo":
        if tokens_per_micro_step is None:
            raise ValueError("loss_type='dapo' needs tokens_per_micro_step")
        normaliser = torch.as_tensor(tokens_per_micro_step, dtype=per_token_logps.dtype).clamp(min=1.0)
        loss = (per_token_loss * mask).sum() / normaliser
    else:
        raise ValueError(f"loss_type={loss_type!r}; choose grpo, bnpo, dr_grpo or dapo")

    with torch.no_grad():
        ratio_b = ratio.expand_as(mask)
        low = ((ratio_b < 1 - epsilon_low) & (adv < 0)).to(mask.dtype)
        high = ((ratio_b > 1 + epsilon_high) & (adv > 0)).to(mask.dtype)
        active = mask.sum().clamp(min=1.0)
        low_clip = (low * mask).sum() / active
        high_clip = (high * mask).sum() / active
        region_clip = ((low + high).clamp(max=1.0) * mask).sum() / active
    return LossOutput(loss=loss, kl=kl_mean, low_clip=low_clip, high_clip=high_clip, region_clip=region_clip)
