"""The per-round GRPO metrics, under TRL 1.16's names, from tensors already gathered over all processes.

Pure functions (no trainer state), so that the key set and each value can be checked by hand:

* :func:`completion_metrics`: ``completions/{mean,min,max}_length``, ``completions/clipped_ratio`` (share of
  completions that hit ``max_completion_length`` without an EOS) and ``completions/{mean,min,max}_
  terminated_length`` (the lengths of the others; 0 when none ended);
* :func:`reward_metrics`: ``rewards/<function>/{mean,std}`` (over the rows the function scored),
  ``reward`` / ``reward_std`` (the weighted sum, unscorable rows left out: its mean and its std over the
  round, as TRL), ``frac_reward_zero_std`` (share of completions whose reward std is zero,
  as TRL: the group's std, or the round's with ``scale_rewards="batch"``; a group with fewer than 2 scored
  completions has no std and does not count) and ``frac_reward_unscorable`` (share no function scored; trainwright's own).

:class:`.callbacks.StepTimeCallback` adds ``step_time``. The loss-side metrics (``entropy``, ``clip_ratio/*``, ``kl``, ...) come from
:class:`~trainwright.trainers.grpo.loss.LossOutput`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from trainwright.trainers.grpo.advantages import AdvantageResult, combine_rewards, nanstd, unscorable


def completion_metrics(lengths: torch.Tensor, truncated: torch.Tensor) -> dict[str, float]:
    """``completions/*`` of a round: ``lengths`` (N,) completion lengths, ``truncated`` (N,) bool."""
    lengths = lengths.float()
    ended = lengths[~truncated.bool()]
    if ended.numel() == 0:
        ended = torch.zeros(1)
    return {
        "completions/mean_length": lengths.mean().item(),
        "completions/min_length": lengths.min().item(),
        "completions/max_length": lengths.max().item(),
        "completions/clipped_ratio": truncated.float().mean().item(),
        "completions/mean_terminated_length": ended.mean().item(),
        "completions/min_terminated_length": ended.min().item(),
        "completions/max_terminated_length": ended.max().item(),
    }


def reward_metrics(
    rewards_per_func: torch.Tensor, names: Sequence[str], weights: torch.Tensor, advantages: AdvantageResult
) -> dict[str, float]:
    """Reward metrics of a round's ``(N, K)`` rewards (NaN where a function returned ``None``).

    A value is NaN when nothing was scored (e.g. a function that returned ``None`` everywhere); the
    trainer leaves NaN values out of the logging window.
    """
    metrics: dict[str, float] = {}
    for k, name in enumerate(names):
        metrics[f"rewards/{name}/mean"] = torch.nanmean(rewards_per_func[:, k]).item()
        metrics[f"rewards/{name}/std"] = nanstd(rewards_per_func[:, k]).item()
    combined = combine_rewards(rewards_per_func, weights)
    metrics["reward"] = torch.nanmean(combined).item()
    metrics["reward_std"] = nanstd(combined).item()
    metrics["frac_reward_zero_std"] = advantages.frac_zero_std
    metrics["frac_reward_unscorable"] = unscorable(rewards_per_func).float().mean().item()
    return metrics
