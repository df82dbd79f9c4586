"""GRPO's loss types: one registry entry per ``loss_type``, the only place a loss is declared.

Why a registry: a loss type used to be a name in five hand-kept lists (the config's choices, the clipped and
window-normalised sets, two ``if`` chains, the TRL-fields note) that drifted apart. Now an entry holds its
policy term ``ℓ_t``, its aggregation over a micro-batch, the paper, the options it reads and the metrics it
logs; the config's choices (:func:`loss_type_names`), :data:`CLIPPED_LOSSES`-style sets
(:func:`losses_where`), the configuration notes, the TRL-fields note and the table in ``docs/trainers.md``
(:func:`render_markdown`) are all derived from :data:`LOSSES`. Adding a loss is one :func:`register` call
(or one entry below) plus its test. The notation is :mod:`trainwright.trainers.grpo.loss`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class PolicyInputs:
    """What a policy term reads: log-probs, ratios and advantages of one micro-batch, all ``(B, T)`` or
    broadcastable (``ratio`` is ``(B, 1)`` with sequence-level importance sampling), and the loss settings."""

    per_token_logps: torch.Tensor
    log_ratio: torch.Tensor
    ratio: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor
    settings: Any  # a ``loss.LossSettings``


#: ``ℓ_t`` from the inputs; puts the tensors its statistics need into the dict
PolicyTerm = Callable[[PolicyInputs, dict[str, torch.Tensor]], torch.Tensor]


@dataclass(frozen=True)
class Aggregation:
    """How per-token losses ``ℓ M`` become one micro-batch loss.

    ``fn(masked, mask, settings, tokens_per_micro_step)`` receives ``ℓ · M``; ``token_summed``: the
    aggregation sums per-token terms across the batch, so a sequence-level ratio weighs each sequence by
    its length (see :func:`~trainwright.trainers.grpo.config.loss_setting_notes`).
    """

    name: str
    formula: str
    fn: Callable[[torch.Tensor, torch.Tensor, Any, Any], torch.Tensor]
    token_summed: bool
    options: tuple[str, ...] = ()


def _sequence_mean(masked: torch.Tensor, mask: torch.Tensor, settings: Any, n_bar: Any) -> torch.Tensor:
    return (masked.sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()


def _token_mean(masked: torch.Tensor, mask: torch.Tensor, settings: Any, n_bar: Any) -> torch.Tensor:
    return masked.sum() / mask.sum().clamp(min=1.0)


def _constant(masked: torch.Tensor, mask: torch.Tensor, settings: Any, n_bar: Any) -> torch.Tensor:
    if settings.max_completion_length is None:
        raise ValueError(f"loss_type={settings.loss_type!r} needs max_completion_length")
    return masked.sum() / (masked.size(0) * settings.max_completion_length)


def _window(masked: torch.Tensor, mask: torch.Tensor, settings: Any, n_bar: Any) -> torch.Tensor:
    if n_bar is None:
        raise ValueError(f"loss_type={settings.loss_type!r} needs tokens_per_micro_step")
    normaliser = torch.as_tensor(n_bar, dtype=masked.dtype).clamp(min=1.0)
    return masked.sum() / normaliser.to(masked.device)


def _sequence_sum(masked: torch.Tensor, mask: torch.Tensor, settings: Any, n_bar: Any) -> torch.Tensor:
    return masked.sum(-1).mean()


SEQUENCE_MEAN = Aggregation(
    "sequence mean",
    "mean_i [ Σ_t ℓ_it M_it / Σ_t M_it ] (length-normalised; DeepSeekMath)",
    _sequence_mean,
    False,
)
TOKEN_MEAN = Aggregation("token mean", "Σ ℓ M / Σ M over the micro-batch", _token_mean, True)
CONSTANT = Aggregation(
    "constant", "Σ ℓ M / (B · max_completion_length) (Dr. GRPO)", _constant, True, ("max_completion_length",)
)
WINDOW = Aggregation(
    "window token mean",
    "Σ ℓ M / N̄, N̄ = active tokens of the round ÷ (processes × steps_per_generation) (DAPO)",
    _window,
    True,
    ("steps_per_generation",),
)
SEQUENCE_SUM = Aggregation(
    "sequence sum", "mean_i [ Σ_t ℓ_it M_it ] (each sequence weighted by its length)", _sequence_sum, True
)


def clipped_surrogate(x: PolicyInputs, stats: dict[str, torch.Tensor]) -> torch.Tensor:
    """PPO's clipped surrogate, with DAPO's ``ε_high`` and INTELLECT-2's ``delta`` cap on the unclipped ratio."""
    s, ratio, adv = x.settings, x.ratio, x.advantages
    clipped = torch.clamp(ratio, 1 - s.epsilon_low, 1 + s.epsilon_high)
    unclipped = ratio if s.delta is None else torch.clamp(ratio, max=s.delta)
    stats["clip_low"] = (unclipped < 1 - s.epsilon_low) & (adv < 0)
    stats["clip_high"] = (unclipped > 1 + s.epsilon_high) & (adv > 0)
    return -torch.min(unclipped * adv, clipped * adv)


def cispo_term(x: PolicyInputs, stats: dict[str, torch.Tensor]) -> torch.Tensor:
    """CISPO: the importance weight clipped and detached, times ``A · log π_θ``."""
    eps_high, ratio, adv = x.settings.epsilon_high, x.ratio, x.advantages
    stats["cispo_clip"] = (ratio > eps_high) & (adv > 0)
    return -torch.clamp(ratio, max=eps_high).detach() * adv * x.per_token_logps


def sapo_term(x: PolicyInputs, stats: dict[str, torch.Tensor]) -> torch.Tensor:
    """SAPO: a sigmoid gate of the ratio, with its temperature chosen by the advantage's sign."""
    s, adv = x.settings, x.advantages
    tau = torch.where(adv > 0, s.sapo_temperature_pos, s.sapo_temperature_neg)
    return -(torch.sigmoid(tau * (x.ratio - 1)) * 4 / tau) * adv


@torch.no_grad()
def vespo_weights(
    advantages: torch.Tensor, log_ratio: torch.Tensor, mask: torch.Tensor, settings: Any
) -> torch.Tensor:
    """VESPO's φ(w) per sequence, (B, 1), without gradient (see :mod:`trainwright.trainers.grpo.loss`)."""
    log_floor = math.log(1e-8)
    log_w = (log_ratio.clamp(-20.0, 20.0) * mask).sum(-1, keepdim=True).clamp(log_floor, 20.0)
    positive = advantages >= 0
    k = torch.where(positive, settings.vespo_k_pos, settings.vespo_k_neg)
    lam = torch.where(positive, settings.vespo_lambda_pos, settings.vespo_lambda_neg).clamp(min=1e-4)
    phi = torch.exp(lam + k * log_w - lam * torch.exp(log_w))
    return torch.nan_to_num(phi, nan=0.0, posinf=0.0, neginf=0.0)


def vespo_term(x: PolicyInputs, stats: dict[str, torch.Tensor]) -> torch.Tensor:
    """VESPO: a gamma-shaped weight of the sequence ratio, times ``A · log π_θ``."""
    phi = vespo_weights(x.advantages, x.log_ratio, x.mask, x.settings)
    stats["vespo_phi"] = phi
    return -phi * x.advantages * x.per_token_logps


_CLIP_METRICS = (
    "clip_ratio/low_mean",
    "clip_ratio/high_mean",
    "clip_ratio/region_mean",
    "clip_ratio/low_min",
    "clip_ratio/high_max",
)
_CLIP_OPTIONS = ("epsilon", "epsilon_high", "delta")
_CLIPPED_FORMULA = "−min(r̃_t A, clip(r_t, 1 − ε_low, 1 + ε_high) A), r̃_t = min(r_t, δ)"
_PPO = "PPO, Schulman et al. 2017, arXiv:1707.06347"


@dataclass(frozen=True)
class GRPOLossSpec:
    """A registered GRPO loss type.

    ``formula``: the policy term ``ℓ_t``; ``paper``: where it comes from; ``policy_term``/``aggregation``:
    how it is computed; ``options``: the ``GRPOConfig`` fields it reads beyond the shared ones (``beta``,
    ``importance_sampling_level``, masks, entropy); ``metrics``: the keys it logs beyond the shared ones;
    ``ratio_level``/``ratio_level_note``: the ``importance_sampling_level`` it is defined with and the
    configuration note logged when another one is set (``None``: either).
    """

    formula: str
    paper: str
    policy_term: PolicyTerm
    aggregation: Aggregation
    options: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    ratio_level: str | None = None
    ratio_level_note: str = ""

    @property
    def all_options(self) -> tuple[str, ...]:
        """The options of the policy term, then those of the aggregation."""
        return self.options + tuple(o for o in self.aggregation.options if o not in self.options)


def _clipped(paper: str, aggregation: Aggregation, **kwargs: Any) -> GRPOLossSpec:
    return GRPOLossSpec(
        _CLIPPED_FORMULA, paper, clipped_surrogate, aggregation, _CLIP_OPTIONS, _CLIP_METRICS, **kwargs
    )


LOSSES: dict[str, GRPOLossSpec] = {
    "grpo": _clipped(f"GRPO, Shao et al. 2024, arXiv:2402.03300 ({_PPO})", SEQUENCE_MEAN),
    "bnpo": _clipped("TRL's `bnpo`: the token mean of the micro-batch (" + _PPO + ")", TOKEN_MEAN),
    "dr_grpo": _clipped(f"Dr. GRPO, Liu et al. 2025, arXiv:2503.20783 ({_PPO})", CONSTANT),
    "dapo": _clipped(f"DAPO, Yu et al. 2025, arXiv:2503.14476 ({_PPO})", WINDOW),
    "cispo": GRPOLossSpec(
        "−sg[min(r_t, ε_high)] · A · log π_θ(y_t)",
        "CISPO, MiniMax-M1, arXiv:2506.13585",
        cispo_term,
        WINDOW,
        ("epsilon_high",),
        ("cispo_clip_ratio",),
    ),
    "sapo": GRPOLossSpec(
        "−(4/τ) σ(τ (r_t − 1)) · A, τ = sapo_temperature_pos if A > 0 else sapo_temperature_neg",
        "SAPO, Soft Adaptive Policy Optimization, arXiv:2511.20347",
        sapo_term,
        SEQUENCE_MEAN,
        ("sapo_temperature_pos", "sapo_temperature_neg"),
    ),
    "luspo": _clipped(
        f"LUSPO (Length-Unbiased Sequence Policy Optimization), arXiv:2602.05261 (GSPO scaled by the completion length; {_PPO})",
        SEQUENCE_SUM,
        ratio_level="sequence",
        ratio_level_note=(
            "loss_type='luspo' is defined with sequence-level ratios (LUSPO scales GSPO by the completion "
            "length); set importance_sampling_level='sequence' to follow the paper"
        ),
    ),
    "vespo": GRPOLossSpec(
        "−φ(w) · A · log π_θ(y_t), φ(w) = exp(λ + k log w − λ w), w the sequence ratio",
        "VESPO (Variational Sequence-Level Soft Policy Optimization), arXiv:2602.10693",
        vespo_term,
        WINDOW,
        ("vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg"),
        ("vespo/phi_seq_mean",),
        ratio_level="token",
        ratio_level_note=(
            "loss_type='vespo' computes its own sequence-level weight from the token ratios; set "
            "importance_sampling_level='token' (the default)"
        ),
    ),
}


def register(name: str, spec: GRPOLossSpec) -> None:
    """Add loss type ``name`` (refused when the name is taken: a registry entry is never silently replaced)."""
    if name in LOSSES:
        raise ValueError(f"GRPO loss_type {name!r} is already registered")
    LOSSES[name] = spec


def unregister(name: str) -> GRPOLossSpec:
    """Remove loss type ``name`` and return its entry (for tests that register a throw-away loss)."""
    return LOSSES.pop(name)


def loss_type_names() -> tuple[str, ...]:
    """The ``loss_type`` choices of ``GRPOConfig``, in registry order."""
    return tuple(LOSSES)


def losses_where(predicate: Callable[[GRPOLossSpec], bool]) -> tuple[str, ...]:
    """The names of the loss types whose entry satisfies ``predicate``, in registry order."""
    return tuple(name for name, spec in LOSSES.items() if predicate(spec))


def get(name: str) -> GRPOLossSpec:
    """The entry of ``name``, or a ``ValueError`` naming the choices."""
    spec = LOSSES.get(name)
    if spec is None:
        *first, last = LOSSES
        raise ValueError(f"loss_type={name!r}; choose {', '.join(first)} or {last}")
    return spec


def trl_note(default: str = "dapo") -> str:
    """The ``loss_type`` note of the TRL-fields table: every registered name, the default marked."""
    return ", ".join(f"{name} (the default)" if name == default else name for name in LOSSES)


def render_markdown() -> str:
    """The loss-type table of ``docs/trainers.md`` (the page holds exactly this text)."""
    lines = [
        "| `loss_type` | policy term ℓ_t | aggregation | options | metrics | paper |",
        "|---|---|---|---|---|---|",
    ]
    for name, spec in LOSSES.items():
        options = ", ".join(f"`{o}`" for o in spec.all_options) or "–"
        metrics = ", ".join(f"`{m}`" for m in spec.metrics) or "–"
        lines.append(
            f"| `{name}` | {spec.formula} | {spec.aggregation.formula} | {options} | {metrics} | {spec.paper} |"
        )
    return "\n".join(lines)
