"""GRPO's rewards → advantages, as pure tensor functions (no trainer state).

A generation round holds groups of G completions of the same prompt; ``r_ik`` is reward function
``k``'s score of completion ``i`` (NaN where it returned ``None``), ``w_k`` its weight.

``multi_objective_aggregation="sum_then_normalize"`` (the default; GRPO, Shao et al. 2024, "DeepSeekMath",
arXiv:2402.03300; Dr. GRPO, Liu et al. 2025, arXiv:2503.20783, for ``scale_rewards="none"``)::

    R_i = Σ_k w_k r_ik
    A_i = (R_i − mean_group(R)) / (σ + 1e-4)      σ = group std ("group"), batch std ("batch"), 1 ("none")

``"normalize_then_sum"`` (GDPO, "Group reward-Decoupled Normalization Policy Optimization for
Multi-reward RL Optimization", arXiv:2601.05242): each reward is normalised inside its group first, so
a reward with a large scale cannot drown the others, then the weighted sum is normalised over the batch::

    ρ_ik = (r_ik − mean_group(r_·k)) / (std_group(r_·k) + 1e-4)
    S_i  = Σ_k w_k ρ_ik
    A_i  = (S_i − mean_batch(S)) / (std_batch(S) + 1e-4)           (scale_rewards is not used)

Stds use Bessel's correction and ignore NaN; a completion every function skipped gets advantage 0.
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
    group_std: torch.Tensor  # (N,) the std the advantages were scaled by (group or batch), broadcast
    zero_std: torch.Tensor  # (N,) bool: that std is zero (the group carries no learning signal)
    #: (N,) the std TRL tests for ``frac_reward_zero_std``: the group's (``scale_rewards`` "group"/"none")
    #: or the round's ("batch", and ``normalize_then_sum``); NaN (not zero) under 2 scored completions
    logged_std: torch.Tensor | None = None

    @property
    def frac_zero_std(self) -> float:
        """``frac_reward_zero_std`` as TRL computes it: the share of rows whose ``logged_std`` is zero."""
        std = self.group_std if self.logged_std is None else self.logged_std
        return torch.isclose(std, torch.zeros_like(std)).float().mean().item()


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
    return torch.where(unscorable(rewards_per_func), torch.full_like(total, float("nan")), total)


def unscorable(rewards_per_func: torch.Tensor) -> torch.Tensor:
    """(N,) bool: every reward function returned ``None`` (NaN) for the row."""
    return torch.isnan(rewards_per_func).all(dim=1)


def nanstd(values: torch.Tensor, dim: int = 0, keepdim: bool = False) -> torch.Tensor:
    """Sample standard deviation (Bessel's n−1, as ``torch.std``) ignoring NaN; NaN for < 2 values."""
    count = (~torch.isnan(values)).sum(dim=dim, keepdim=True)
    mean = torch.nanmean(values, dim=dim, keepdim=True)
    squares = torch.nansum((values - mean) ** 2, dim=dim, keepdim=True)
    var = squares / (count - 1).clamp(min=1)
    var = torch.where(count > 1, var, torch.full_like(var, float("nan")))
    std = var.sqrt()
    return std if keepdim else std.squeeze(dim)


def _is_zero(std: torch.Tensor) -> torch.Tensor:
    return torch.isclose(std, torch.zeros_like(std)) | torch.isnan(std)


def compute_advantages(
    rewards: torch.Tensor, num_generations: int, scale_rewards: str = "group"
) -> AdvantageResult:
    """Group-relative advantages of ``rewards`` (N,), laid out as consecutive groups of G
    (``sum_then_normalize``; see the module docstring)."""
    _check_groups(rewards.shape[0] if rewards.dim() == 1 else -1, num_generations, rewards.shape)
    grouped = rewards.view(-1, num_generations)
    group_mean = torch.nanmean(grouped, dim=1, keepdim=True)
    centred = (grouped - group_mean).reshape(-1)
    group_std = nanstd(grouped, dim=1).repeat_interleave(num_generations)
    if scale_rewards == "group":
        scale = group_std
    elif scale_rewards == "batch":
        scale = nanstd(rewards).expand_as(rewards)
    elif scale_rewards == "none":
        scale = None
    else:
        raise ValueError(f"scale_rewards={scale_rewards!r}; choose 'group', 'batch' or 'none'")
    advantages = centred if scale is None else centred / (scale + ADVANTAGE_EPS)
    if scale_rewards == "batch":
        logged = scale if rewards.numel() > 1 else torch.zeros_like(rewards)
    else:  # TRL: a group of one (an evaluation with num_generations_eval=1) counts as zero std
        logged = group_std if num_generations > 1 else torch.zeros_like(rewards)
    return AdvantageResult(
        advantages=torch.nan_to_num(advantages, nan=0.0),
        rewards=rewards,
        group_std=group_std,
        zero_std=_is_zero(group_std),
        logged_std=logged,
    )


def normalize_then_sum_advantages(
    rewards_per_func: torch.Tensor, weights: torch.Tensor, num_generations: int
) -> AdvantageResult:
    """GDPO's advantages of ``rewards_per_func`` (N, K): per-function group normalisation, weighted sum,
    batch normalisation (see the module docstring)."""
    n, k = rewards_per_func.shape
    _check_groups(n, num_generations, rewards_per_func.shape)
    grouped = rewards_per_func.view(-1, num_generations, k)
    mean = torch.nanmean(grouped, dim=1, keepdim=True)
    std = nanstd(grouped, dim=1, keepdim=True) if num_generations > 1 else torch.zeros_like(mean)
    normalised = ((grouped - mean) / (std + ADVANTAGE_EPS)).view(n, k)
    summed = torch.nansum(normalised * weights.to(normalised), dim=1)
    summed = torch.where(unscorable(rewards_per_func), torch.full_like(summed, float("nan")), summed)
    batch_std = nanstd(summed) if n > 1 else torch.zeros(())
    advantages = (summed - torch.nanmean(summed)) / (batch_std + ADVANTAGE_EPS)
    batch_std = batch_std.expand(n)
    return AdvantageResult(
        advantages=torch.nan_to_num(advantages, nan=0.0),
        rewards=combine_rewards(rewards_per_func, weights),
        group_std=batch_std,
        zero_std=_is_zero(batch_std),
    )


def round_advantages(
    rewards_per_func: torch.Tensor,
    weights: torch.Tensor,
    num_generations: int,
    scale_rewards: str = "group",
    aggregation: str = "sum_then_normalize",
) -> AdvantageResult:
    """The advantages of a round's ``(N, K)`` rewards under ``multi_objective_aggregation``."""
    if aggregation == "sum_then_normalize":
        return compute_advantages(combine_rewards(rewards_per_func, weights), num_generations, scale_rewards)
    if aggregation == "normalize_then_sum":
        return normalize_then_sum_advantages(rewards_per_func, weights, num_generations)
    raise ValueError(
        f"multi_objective_aggregation={aggregation!r}; choose 'sum_then_normalize' or 'normalize_then_sum'"
    )


def _check_groups(rows: int, num_generations: int, shape: torch.Size) -> None:
    if rows < 0 or rows % num_generations != 0:
        raise ValueError(
            f"rewards of shape {tuple(shape)} cannot be split into groups of num_generations={num_generations}"
        )
