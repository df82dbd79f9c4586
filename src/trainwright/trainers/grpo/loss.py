"""GRPO's loss family, as pure tensor functions (no trainer state). Advantages: :mod:`.advantages`; each
loss type's policy term and aggregation are its entry in :mod:`.loss_types` (the formulas below, one place to add one).

Notation: ``A`` the advantage of a completion, ``M_t`` its completion mask, ``π_θ`` the policy being
trained, ``π_old`` the policy that sampled the completions, ``π_ref`` the frozen reference.

Importance ratio::

    r_t = exp(log π_θ − log π_old)                                  token level
    r   = exp(Σ_t M_t (log π_θ − log π_old) / Σ_t M_t)              sequence level
          (GSPO, Zheng et al. 2025, arXiv:2507.18071)

Per-token policy term ``ℓ_t`` by ``loss_type``:

* ``grpo``, ``bnpo``, ``dr_grpo``, ``dapo``, ``luspo`` — PPO's clipped surrogate (Schulman et al. 2017,
  arXiv:1707.06347; the asymmetric ``ε_high`` is DAPO's clip-higher, Yu et al. 2025, arXiv:2503.14476)::

      ℓ_t = −min(r̃_t A, clip(r_t, 1 − ε_low, 1 + ε_high) A)     r̃_t = min(r_t, δ) with ``delta``
                                                               (INTELLECT-2, arXiv:2505.07291), else r_t
* ``cispo`` (MiniMax-M1, arXiv:2506.13585): clip the importance weight, not the update::

      ℓ_t = −sg[min(r_t, ε_high)] · A · log π_θ(y_t)
* ``sapo`` (Soft Adaptive Policy Optimization, arXiv:2511.20347): a smooth gate instead of the clip::

      ℓ_t = −(4/τ) σ(τ (r_t − 1)) · A          τ = sapo_temperature_pos if A > 0 else sapo_temperature_neg
* ``vespo`` (VESPO, arXiv:2602.10693): a gamma-shaped weight of the *sequence* ratio ``w = exp(Σ_t M_t
  log r_t)`` (log terms clipped to ±20, ``log w`` to [log 1e-8, 20]), without gradient::

      φ(w) = exp(λ + k log w − λ w)  (φ(1) = 1)       ℓ_t = −φ(w) · A · log π_θ(y_t)
      (k, λ) = (vespo_k_pos, vespo_lambda_pos) if A ≥ 0 else (vespo_k_neg, vespo_lambda_neg)

Masks applied to ``ℓ_t`` before the KL term is added:

* off-policy sequence mask (DeepSeek-V3.2, arXiv:2512.02556; ``off_policy_mask_threshold`` δ): drop a
  sequence when ``A < 0`` and its mean ``log π_old − log π_θ`` over active tokens exceeds δ;
* the high-entropy token mask (``top_entropy_quantile``, "Beyond the 80/20 Rule", arXiv:2506.01939),
  computed by the trainer and passed in as ``token_mask``.

KL to the reference with the k3 estimator (Schulman 2020, "Approximating KL divergence"), optionally
multiplied by ``r_t`` so that its gradient is unbiased off-policy (``use_bias_correction_kl``)::

    ℓ_t += β · KL_t      KL_t = exp(log π_ref − log π_θ) − (log π_ref − log π_θ) − 1

Aggregation over a micro-batch of B sequences (the Trainer then divides by gradient accumulation):

* ``grpo``, ``sapo``: mean_i [ Σ_t ℓ_it M_it / Σ_t M_it ]  (length-normalised per sequence; DeepSeekMath)
* ``bnpo``:    Σ ℓ M / Σ M                                 (token mean over the micro-batch)
* ``dr_grpo``: Σ ℓ M / (B · max_completion_length)         (constant normaliser; Dr. GRPO, arXiv:2503.20783)
* ``dapo``, ``cispo``, ``vespo``: Σ ℓ M / N̄               (token mean over the accumulation window; DAPO)
  where ``N̄`` = active tokens of the whole generation round on all processes
  ÷ (processes × steps_per_generation), the average number of tokens one micro-step sees;
* ``luspo`` (LUSPO, arXiv:2602.05261): mean_i [ Σ_t ℓ_it M_it ]  (each sequence weighted by its length).

Entropy bonus (``entropy_coef`` c; the mean token entropy H over the tokens the policy term acts on,
the same for every loss type)::

    loss = policy_loss − c · Σ_t H_t M'_t / Σ_t M'_t       M' = M × token_mask
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import torch

from trainwright.trainers.common.config_checks import finite_knob
from trainwright.trainers.grpo import loss_types
from trainwright.trainers.grpo.loss_types import PolicyInputs

#: float knobs of ``GRPOConfig`` checked (finite, >= 0) every time the loss reads them
_CHECKED_KNOBS = ("beta", "epsilon_high")


@dataclass(frozen=True)
class LossSettings:
    """The loss options of ``GRPOConfig`` (see the module docstring), built once per trainer."""

    loss_type: str = "dapo"
    beta: float = 0.0
    epsilon_low: float = 0.2
    epsilon_high: float = 0.2
    delta: float | None = None
    importance_sampling_level: str = "token"
    use_bias_correction_kl: bool = True
    max_completion_length: int | None = None
    off_policy_mask_threshold: float | None = None
    sapo_temperature_pos: float = 1.0
    sapo_temperature_neg: float = 1.05
    vespo_k_pos: float = 2.0
    vespo_lambda_pos: float = 3.0
    vespo_k_neg: float = 3.0
    vespo_lambda_neg: float = 2.0

    @classmethod
    def from_config(cls, args: Any) -> LossSettings:
        """The settings of a ``GRPOConfig`` (``epsilon`` is ε_low), its float knobs checked where the loss reads
        them (:func:`~trainwright.trainers.common.config_checks.finite_knob`: a schedule may change them)."""
        names = {f.name for f in dataclasses.fields(cls)} - {"epsilon_low", *_CHECKED_KNOBS}
        checked = {name: finite_knob(args, name, minimum=0.0) for name in _CHECKED_KNOBS}
        return cls(
            epsilon_low=finite_knob(args, "epsilon", minimum=0.0),
            **checked,
            **{n: getattr(args, n) for n in names},
        )


@dataclass
class LossOutput:
    """The micro-batch loss (before the Trainer's division by gradient accumulation) and its statistics.

    ``means`` maps a metric name to ``(sum, count)`` (so that processes can be pooled exactly);
    ``per_sequence`` maps ``clip_ratio/low_min`` / ``clip_ratio/high_max`` to one value per sequence
    (NaN for a sequence without active tokens), reduced with a min / max over all processes.
    """

    loss: torch.Tensor
    policy_loss: torch.Tensor  # the loss without the entropy bonus (detached)
    means: dict[str, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)
    per_sequence: dict[str, torch.Tensor] = field(default_factory=dict)

    def mean(self, name: str) -> torch.Tensor | None:
        """The local mean of metric ``name`` (``None`` if this loss type does not compute it)."""
        if name not in self.means:
            return None
        total, count = self.means[name]
        return total / count.clamp(min=1.0)

    @property
    def kl(self) -> torch.Tensor | None:
        return self.mean("kl")

    @property
    def low_clip(self) -> torch.Tensor | None:
        return self.mean("clip_ratio/low_mean")

    @property
    def high_clip(self) -> torch.Tensor | None:
        return self.mean("clip_ratio/high_mean")

    @property
    def region_clip(self) -> torch.Tensor | None:
        return self.mean("clip_ratio/region_mean")


def off_policy_mask(
    advantages: torch.Tensor,
    per_token_logps: torch.Tensor,
    sampling_per_token_logps: torch.Tensor,
    mask: torch.Tensor,
    threshold: float,
) -> torch.Tensor:
    """(B, 1) of ``mask``'s dtype: 1 keeps a sequence, 0 drops it (A < 0 and mean KL(π_old‖π_θ) > δ).

    The KL estimate is the mean of ``log π_old − log π_θ`` over the sequence's active tokens (padding
    ignored; a token without a sampling log-prob, NaN, counts as 0).
    """
    advantages = advantages.unsqueeze(-1) if advantages.dim() == 1 else advantages
    gap = torch.nan_to_num(sampling_per_token_logps - per_token_logps.detach(), nan=0.0)
    mean_gap = (gap * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1.0)
    return ((advantages >= 0) | (mean_gap <= threshold)).to(mask.dtype)


def _policy_term(inputs: PolicyInputs, stats: dict[str, torch.Tensor]) -> torch.Tensor:
    """``ℓ_t`` of ``settings.loss_type`` (its registry entry's policy term); fills ``stats`` for the metrics."""
    return loss_types.get(inputs.settings.loss_type).policy_term(inputs, stats)


def _aggregate(
    per_token_loss: torch.Tensor,
    mask: torch.Tensor,
    settings: LossSettings,
    tokens_per_micro_step: float | torch.Tensor | None,
) -> torch.Tensor:
    """The micro-batch loss by the registry entry's aggregation."""
    aggregation = loss_types.get(settings.loss_type).aggregation
    return aggregation.fn(per_token_loss * mask, mask, settings, tokens_per_micro_step)


def _masked(x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sum, count)`` of ``x`` over active tokens; a per-sequence ``(B, 1)`` value counts once per sequence."""
    x = x.detach().float()
    if x.shape[-1] == 1 and mask.shape[-1] != 1:
        return x.sum(), torch.tensor(float(x.shape[0]), device=x.device)
    return (x * mask).sum(), mask.sum().float()


def _per_sequence(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """One value per sequence: the masked mean over its tokens (NaN without active tokens)."""
    x = x.detach().float()
    if x.shape[-1] == 1 and mask.shape[-1] != 1:
        return x.squeeze(-1)
    return (x * mask).sum(-1) / mask.sum(-1)


def _importance_ratio(log_ratio: torch.Tensor, mask: torch.Tensor, level: str) -> torch.Tensor:
    """``r_t`` (token level, (B, T)) or GSPO's ``r`` (sequence level, (B, 1)) from ``log π_θ − log π_old``."""
    if level == "token":
        log_weights = log_ratio
    elif level == "sequence":
        log_weights = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    else:
        raise ValueError(f"importance_sampling_level={level!r}; choose 'token' or 'sequence'")
    return torch.exp(log_weights)


def _k3_kl(
    per_token_logps: torch.Tensor,
    ref_per_token_logps: torch.Tensor | None,
    ratio: torch.Tensor,
    settings: LossSettings,
) -> torch.Tensor:
    """``KL_t`` to the reference by the k3 estimator, times ``r_t`` with ``use_bias_correction_kl``."""
    if ref_per_token_logps is None:
        raise ValueError(
            f"beta={settings.beta} needs reference log-probs (ref_per_token_logps), but this run has no "
            "reference model: beta was 0 when the trainer was built (as TRL, beta=0 builds none). Set a "
            "non-zero beta in the config to schedule or change it during training"
        )
    gap = ref_per_token_logps - per_token_logps
    per_token_kl = torch.exp(gap) - gap - 1
    if settings.use_bias_correction_kl:
        per_token_kl = per_token_kl * ratio
    return per_token_kl


def _add_metrics(
    output: LossOutput, stats: dict[str, torch.Tensor], mask: torch.Tensor, entropies: torch.Tensor | None
) -> None:
    """The statistics the policy term and the KL put into ``stats`` (and the entropies), as metrics."""
    if "kl" in stats:
        output.means["kl"] = _masked(stats["kl"], mask)
    if entropies is not None:
        output.means["entropy"] = _masked(entropies, mask)
    if "clip_low" in stats:
        low, high = stats["clip_low"].float(), stats["clip_high"].float()
        output.means["clip_ratio/low_mean"] = _masked(low, mask)
        output.means["clip_ratio/high_mean"] = _masked(high, mask)
        output.means["clip_ratio/region_mean"] = _masked((low + high).clamp(max=1.0), mask)
        output.per_sequence["clip_ratio/low_min"] = _per_sequence(low, mask)
        output.per_sequence["clip_ratio/high_max"] = _per_sequence(high, mask)
    if "cispo_clip" in stats:
        output.means["cispo_clip_ratio"] = _masked(stats["cispo_clip"].float(), mask)
    if "vespo_phi" in stats:
        output.means["vespo/phi_seq_mean"] = _masked(stats["vespo_phi"], mask)


def grpo_loss(
    per_token_logps: torch.Tensor,
    advantages: torch.Tensor,
    completion_mask: torch.Tensor,
    settings: LossSettings | None = None,
    *,
    old_per_token_logps: torch.Tensor | None = None,
    ref_per_token_logps: torch.Tensor | None = None,
    tokens_per_micro_step: float | torch.Tensor | None = None,
    token_mask: torch.Tensor | None = None,
    entropies: torch.Tensor | None = None,
    entropy_coef: float = 0.0,
    **overrides: Any,
) -> LossOutput:
    """The GRPO-family loss of one micro-batch (see the module docstring).

    ``per_token_logps``/``old_per_token_logps``/``ref_per_token_logps``/``completion_mask``/``token_mask``/
    ``entropies``: (B, T); ``advantages``: (B,). ``old_per_token_logps=None`` means the sampling policy is
    the current one (ratio exactly 1, gradient still flows through ``per_token_logps``). ``dr_grpo``
    needs ``max_completion_length``; ``dapo``/``cispo``/``vespo`` need ``tokens_per_micro_step`` (N̄).
    ``overrides`` replace fields of ``settings`` (``grpo_loss(..., loss_type="bnpo")``).
    """
    settings = dataclasses.replace(settings or LossSettings(), **overrides)
    mask = completion_mask.to(per_token_logps.dtype)
    adv = advantages.to(per_token_logps.dtype)
    adv = adv.unsqueeze(1) if adv.dim() == 1 else adv
    old = per_token_logps.detach() if old_per_token_logps is None else old_per_token_logps
    log_ratio = per_token_logps - old
    ratio = _importance_ratio(log_ratio, mask, settings.importance_sampling_level)

    stats: dict[str, torch.Tensor] = {}
    per_token_loss = _policy_term(PolicyInputs(per_token_logps, log_ratio, ratio, adv, mask, settings), stats)
    if settings.off_policy_mask_threshold is not None:
        per_token_loss = per_token_loss * off_policy_mask(
            adv, per_token_logps, old, mask, settings.off_policy_mask_threshold
        )
    if token_mask is not None:
        per_token_loss = per_token_loss * token_mask.to(per_token_loss.dtype)
    if settings.beta != 0.0:
        stats["kl"] = _k3_kl(per_token_logps, ref_per_token_logps, ratio, settings)
        per_token_loss = per_token_loss + settings.beta * stats["kl"]

    loss = _aggregate(per_token_loss, mask, settings, tokens_per_micro_step)
    policy_loss = loss.detach()
    if entropies is not None and entropy_coef != 0.0:
        effective = mask if token_mask is None else mask * token_mask.to(mask.dtype)
        mean_entropy = (entropies * effective).sum() / effective.sum().clamp(min=1.0)
        loss = loss - entropy_coef * mean_entropy

    output = LossOutput(loss=loss, policy_loss=policy_loss)
    with torch.no_grad():
        _add_metrics(output, stats, mask, entropies)
    return output
