"""Preference losses as small pure functions of sequence log-probabilities.

Every loss takes a :class:`PairLogps` (summed completion log-probs of the policy and the reference for
the chosen and the rejected completion of each pair, plus the completion lengths) and the scalar
hyper-parameters in :class:`LossParams`, and returns one loss value per pair, shape ``(B,)``. Nothing
here touches a model, so each formula can be tested against hand-written numbers.

Notation used in the docstrings (``B`` pairs; ``σ`` the logistic sigmoid):

* ``Δc = log π_θ(y_c|x) − log π_ref(y_c|x)``, ``Δr`` the same for the rejected completion;
* ``D = Δc − Δr`` (the implicit reward margin divided by β);
* ``|y|`` the number of completion tokens; ``ε`` = ``label_smoothing``;
* ``s(Δ) = f'(exp Δ)``: the score of a log-ratio under the f-divergence of ``f_divergence_type``
  (:func:`f_divergence_scores`; ``s(Δ) = Δ`` for the reverse KL of plain DPO), ``S = s(Δc) − s(Δr)``.

A list of losses is combined as ``Σ_k w_k · mean_over_pairs(loss_k)`` by :func:`combined_loss`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class PairLogps:
    """Sequence log-probs for a batch of ``B`` preference pairs (each field has shape ``(B,)``).

    ``ref_*`` are ``None`` for reference-free training, where the reference log-probs count as 0.
    ``chosen_unweighted``: with LD-DPO token weights, the plain sum the SFT term needs (None: ``chosen``).
    """

    chosen: torch.Tensor
    rejected: torch.Tensor
    ref_chosen: torch.Tensor | None
    ref_rejected: torch.Tensor | None
    chosen_lengths: torch.Tensor
    rejected_lengths: torch.Tensor
    chosen_unweighted: torch.Tensor | None = None

    @property
    def chosen_logratios(self) -> torch.Tensor:
        """``Δc``; equals ``log π_θ(y_c|x)`` when there is no reference."""
        return self.chosen if self.ref_chosen is None else self.chosen - self.ref_chosen

    @property
    def rejected_logratios(self) -> torch.Tensor:
        """``Δr``; equals ``log π_θ(y_r|x)`` when there is no reference."""
        return self.rejected if self.ref_rejected is None else self.rejected - self.ref_rejected

    @property
    def margin(self) -> torch.Tensor:
        """``D = Δc − Δr``."""
        return self.chosen_logratios - self.rejected_logratios


@dataclass(frozen=True)
class LossParams:
    """Scalar hyper-parameters shared by the losses (see ``DPOConfig`` for their meaning)."""

    beta: float = 0.1
    label_smoothing: float = 0.0
    discopop_tau: float = 0.05
    simpo_gamma: float = 0.5
    f_divergence_type: str = "reverse_kl"
    f_alpha_divergence_coef: float = 0.5


LossFn = Callable[[PairLogps, LossParams], torch.Tensor]

F_DIVERGENCES = ("reverse_kl", "forward_kl", "js_divergence", "alpha_divergence")
# The f-DPO derivation leaves a β·log Z(x) term that cancels only in the chosen − rejected score difference,
# so only the losses of that difference (and sft, which reads no reference) generalise (TRL refuses the rest).
F_DIVERGENCE_LOSSES = frozenset(
    {"sigmoid", "cdpo", "sigmoid_norm", "hinge", "ipo", "exo_pair", "robust", "discopop", "sft"}
)
# exp() of a larger argument overflows once cast back to the log-ratios' dtype
_EXP_LIMIT = {torch.float16: 11.0, torch.bfloat16: 80.0, torch.float32: 80.0, torch.float64: 80.0}


def f_divergence_scores(logratio: torch.Tensor, kind: str, alpha: float = 1.0) -> torch.Tensor:
    """``s(Δ) = f'(t)`` at ``t = π_θ/π_ref = exp Δ``: what f-DPO puts where DPO has the log-ratio ``Δ``.

    Wang et al. 2023, "Beyond Reverse KL: Generalizing Direct Preference Optimization with Diverse
    Divergence Constraints", arXiv:2309.16240, Theorem 1 and Table 1:

    * ``reverse_kl``: ``f'(t) = log t + 1``, so ``s = Δ`` (the constant cancels in ``S``): plain DPO;
    * ``forward_kl``: ``f'(t) = 1 − 1/t``, ``s = 1 − exp(−Δ)``;
    * ``js_divergence``: ``f'(t) = log(2t / (1 + t))``, ``s = log 2 + logσ(Δ)``;
    * ``alpha_divergence`` (α = ``f_alpha_divergence_coef``): ``f'(t) = (t^(α−1) − 1)/(α − 1)``,
      ``s = (exp((α−1)Δ) − 1)/(α − 1)``, with ``(α−1)Δ`` clamped above so the exponential stays finite in the
      tensor's dtype; α = 1 is the reverse-KL limit.
    """
    if kind == "reverse_kl":
        return logratio
    if kind == "forward_kl":
        return 1 - torch.exp(-logratio)
    if kind == "js_divergence":
        return math.log(2) + F.logsigmoid(logratio)
    if kind == "alpha_divergence":
        if abs(alpha - 1.0) < 1e-6:
            return logratio
        exponent = ((alpha - 1.0) * logratio).float().clamp(max=_EXP_LIMIT.get(logratio.dtype, 80.0))
        return (torch.exp(exponent) - 1.0).to(logratio.dtype) / (alpha - 1.0)
    raise ValueError(f"unknown f_divergence_type {kind!r}; choose from {F_DIVERGENCES}")


def _scores(p: PairLogps, h: LossParams) -> tuple[torch.Tensor, torch.Tensor]:
    """``(s(Δc), s(Δr))``."""
    kind, alpha = h.f_divergence_type, h.f_alpha_divergence_coef
    return (
        f_divergence_scores(p.chosen_logratios, kind, alpha),
        f_divergence_scores(p.rejected_logratios, kind, alpha),
    )


def score_margin(p: PairLogps, h: LossParams) -> torch.Tensor:
    """``S = s(Δc) − s(Δr)``; ``D`` under the reverse KL."""
    if h.f_divergence_type == "reverse_kl":
        return p.margin
    chosen, rejected = _scores(p, h)
    return chosen - rejected


def _per_token_score_margin(p: PairLogps, h: LossParams) -> torch.Tensor:
    """``s(Δc)/|y_c| − s(Δr)/|y_r|``."""
    chosen, rejected = _scores(p, h)
    return _per_token(chosen, p.chosen_lengths) - _per_token(rejected, p.rejected_lengths)


def _smoothed_logistic(z: torch.Tensor, eps: float) -> torch.Tensor:
    """``−(1−ε)·logσ(z) − ε·logσ(−z)``: the logistic loss with labels flipped with probability ε."""
    return -(1 - eps) * F.logsigmoid(z) - eps * F.logsigmoid(-z)


def _per_token(value: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """``value / |y|`` (an empty completion counts as length 1)."""
    return value / lengths.clamp(min=1)


def sigmoid_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """DPO: ``−logσ(β·D)`` (``−logσ(β·S)`` under an f-divergence). Rafailov et al. 2023, "Direct Preference
    Optimization", arXiv:2305.18290, Eq. 7."""
    return -F.logsigmoid(h.beta * score_margin(p, h))


def cdpo_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """Conservative DPO: ``−(1−ε)·logσ(βD) − ε·logσ(−βD)``.

    DPO with label smoothing for preferences that are wrong with probability ε (Mitchell 2023,
    "A note on DPO with noisy preferences"). TRL 1.16 no longer offers it (its ``sigmoid`` ignores ε).
    """
    return _smoothed_logistic(h.beta * score_margin(p, h), h.label_smoothing)


def hinge_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """SLiC: ``relu(1 − β·D)``. Zhao et al. 2023, "SLiC-HF", arXiv:2305.10425."""
    return torch.relu(1 - h.beta * score_margin(p, h))


def ipo_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """IPO: ``(Δc/|y_c| − Δr/|y_r| − 1/(2β))²``, β playing the role of τ.

    Azar et al. 2023, "A General Theoretical Paradigm to Understand Learning from Human Preferences",
    arXiv:2310.12036, Eq. 17. The per-token normalisation (as in TRL) keeps β comparable across lengths.
    """
    return (_per_token_score_margin(p, h) - 1 / (2 * h.beta)) ** 2


def robust_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """Robust DPO: ``[−(1−ε)·logσ(βD) + ε·logσ(−βD)] / (1 − 2ε)``.

    An unbiased estimate of the clean DPO loss under label flips with rate ε. Chowdhury et al. 2024,
    "Provably Robust DPO", arXiv:2403.00409, Eq. 7.
    """
    z = h.beta * score_margin(p, h)
    eps = h.label_smoothing
    return (-(1 - eps) * F.logsigmoid(z) + eps * F.logsigmoid(-z)) / (1 - 2 * eps)


def exo_pair_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """EXO (pair form): ``σ(βD)·[logσ(βD) − log(1−ε)] + σ(−βD)·[logσ(−βD) − log ε]``.

    The reverse KL between the model's pairwise preference and the smoothed label (1−ε, ε). Ji et al.
    2024, "Towards Efficient Exact Optimization of Language Model Alignment", arXiv:2402.00856, Eq. 16.
    """
    z = h.beta * score_margin(p, h)
    eps = h.label_smoothing
    return torch.sigmoid(z) * (F.logsigmoid(z) - math.log1p(-eps)) + torch.sigmoid(-z) * (
        F.logsigmoid(-z) - math.log(eps)
    )


def nca_pair_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """NCA (pair form): ``−logσ(βΔc) − ½·logσ(−βΔc) − ½·logσ(−βΔr)``.

    Chen et al. 2024, "Noise Contrastive Alignment of Language Models with Explicit Rewards", arXiv:2402.05369.
    """
    rc, rr = h.beta * p.chosen_logratios, h.beta * p.rejected_logratios
    return -F.logsigmoid(rc) - 0.5 * F.logsigmoid(-rc) - 0.5 * F.logsigmoid(-rr)


def bco_pair_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """BCO (pair form, no running reward shift): ``−logσ(βΔc) − logσ(−βΔr)``.

    Jung et al. 2024, "Binary Classifier Optimization for Large Language Model Alignment", arXiv:2404.04656.
    """
    return -F.logsigmoid(h.beta * p.chosen_logratios) - F.logsigmoid(-h.beta * p.rejected_logratios)


def sppo_hard_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """SPPO with hard win probabilities: ``(Δc − 1/(2β))² + (Δr + 1/(2β))²``.

    Wu et al. 2024, "Self-Play Preference Optimization", arXiv:2405.00675, Eq. 4.7 with P=1 for the winner.
    """
    return (p.chosen_logratios - 0.5 / h.beta) ** 2 + (p.rejected_logratios + 0.5 / h.beta) ** 2


def aot_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """AOT (paired): sort ``log π_c − log π_r`` and ``log π_ref,c − log π_ref,r`` over the batch separately;
    with ``d`` their sorted difference, ``−(1−ε)·logσ(βd) − ε·logσ(−βd)``.

    Optimal transport of the margin distribution onto the reference's (first-order stochastic
    dominance). Melnyk et al. 2024, "Distributional Preference Alignment of LLMs via Optimal Transport",
    arXiv:2406.05882. Depends on the whole batch, not on each pair alone.
    """
    policy = torch.sort(p.chosen - p.rejected, dim=0).values
    ref_c = p.ref_chosen if p.ref_chosen is not None else torch.zeros_like(p.chosen)
    ref_r = p.ref_rejected if p.ref_rejected is not None else torch.zeros_like(p.rejected)
    reference = torch.sort(ref_c - ref_r, dim=0).values
    return _smoothed_logistic(h.beta * (policy - reference), h.label_smoothing)


def aot_unpaired_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """AOT (unpaired): sort ``Δc`` and ``Δr`` over the batch separately; with ``d`` = sorted Δc − sorted Δr,
    ``−(1−ε)·logσ(βd) − ε·logσ(−βd)``. Melnyk et al. 2024, arXiv:2406.05882.
    """
    d = torch.sort(p.chosen_logratios, dim=0).values - torch.sort(p.rejected_logratios, dim=0).values
    return _smoothed_logistic(h.beta * d, h.label_smoothing)


def apo_zero_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """APO-zero: ``(1 − σ(βΔc)) + σ(βΔr)``: raise the chosen likelihood, lower the rejected one.

    D'Oosterlinck et al. 2024, "Anchored Preference Optimization", arXiv:2408.06266, Eq. 7.
    """
    return (1 - torch.sigmoid(h.beta * p.chosen_logratios)) + torch.sigmoid(h.beta * p.rejected_logratios)


def apo_down_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """APO-down: ``σ(βΔc) + (1 − σ(β·D))``: lower both, the rejected one more. arXiv:2408.06266, Eq. 8."""
    return torch.sigmoid(h.beta * p.chosen_logratios) + (1 - torch.sigmoid(h.beta * p.margin))


def discopop_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """DiscoPOP: with ``z = βD`` and ``m = σ(z/τ)``: ``(1−m)·(−logσ(z)) + m·exp(−z)``.

    A log-ratio-modulated blend of the logistic and exponential losses found by LLM-driven search.
    Chan et al. 2024, "Discovering Preference Optimization Algorithms with and for LLMs", arXiv:2406.08414, Eq. 5.
    """
    z = h.beta * score_margin(p, h)
    m = torch.sigmoid(z / h.discopop_tau)
    return (1 - m) * -F.logsigmoid(z) + m * torch.exp(-z)


def sigmoid_norm_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """Length-normalised DPO: ``−logσ(β·(Δc/|y_c| − Δr/|y_r|))`` (removes DPO's bias toward long answers)."""
    return -F.logsigmoid(h.beta * _per_token_score_margin(p, h))


def sft_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """NLL of the chosen completions, per token over the batch: ``−Σ_i log π_θ(y_c,i) / Σ_i |y_c,i|``.

    Added to ``sigmoid`` it gives RPO (Pang et al. 2024, "Iterative Reasoning Preference Optimization",
    arXiv:2404.19733). The batch token-mean is broadcast to every pair so it combines like the others.
    LD-DPO's token weights do not apply: it is the plain NLL (as TRL).
    """
    chosen = p.chosen if p.chosen_unweighted is None else p.chosen_unweighted
    value = -chosen.sum() / p.chosen_lengths.sum().clamp(min=1)
    return value.expand(p.chosen.shape[0])


def simpo_loss(p: PairLogps, h: LossParams) -> torch.Tensor:
    """SimPO: ``−logσ(β·(log π_θ(y_c)/|y_c| − log π_θ(y_r)/|y_r|) − γ)``; reference-free.

    The implicit reward is the length-normalised policy log-prob, with a target margin γ
    (``simpo_gamma``). Meng et al. 2024, "SimPO: Simple Preference Optimization with a Reference-Free
    Reward", arXiv:2405.14734, Eq. 6. Ignores the reference log-probs even when present.
    """
    normalised = _per_token(p.chosen, p.chosen_lengths) - _per_token(p.rejected, p.rejected_lengths)
    return -F.logsigmoid(h.beta * normalised - h.simpo_gamma)


@dataclass(frozen=True)
class LossSpec:
    """A registered loss: the function and whether training with it needs a reference model."""

    fn: LossFn
    needs_reference: bool = True


LOSSES: dict[str, LossSpec] = {
    "sigmoid": LossSpec(sigmoid_loss),
    "cdpo": LossSpec(cdpo_loss),
    "hinge": LossSpec(hinge_loss),
    "ipo": LossSpec(ipo_loss),
    "robust": LossSpec(robust_loss),
    "exo_pair": LossSpec(exo_pair_loss),
    "nca_pair": LossSpec(nca_pair_loss),
    "bco_pair": LossSpec(bco_pair_loss),
    "sppo_hard": LossSpec(sppo_hard_loss),
    "aot": LossSpec(aot_loss),
    "aot_unpaired": LossSpec(aot_unpaired_loss),
    "apo_zero": LossSpec(apo_zero_loss),
    "apo_down": LossSpec(apo_down_loss),
    "discopop": LossSpec(discopop_loss),
    "sigmoid_norm": LossSpec(sigmoid_norm_loss),
    # sft's value ignores the reference, but an SFT-only run still reports rewards/* = β·Δ (as TRL does).
    "sft": LossSpec(sft_loss),
    "simpo": LossSpec(simpo_loss, needs_reference=False),
}


def check_loss_types(loss_types: Sequence[str], loss_weights: Sequence[float] | None) -> list[float]:
    """Validate loss names and weights; return the weights (1.0 each when not given)."""
    if not loss_types:
        raise ValueError("loss_type is empty: give at least one loss name, e.g. loss_type='sigmoid'")
    unknown = [name for name in loss_types if name not in LOSSES]
    if unknown:
        raise ValueError(f"unknown loss_type {unknown}; choose from {sorted(LOSSES)}")
    if loss_weights is None:
        return [1.0] * len(loss_types)
    if len(loss_weights) != len(loss_types):
        raise ValueError(
            f"loss_weights has {len(loss_weights)} entries but loss_type has {len(loss_types)} "
            f"({list(loss_types)}): give one weight per loss"
        )
    return [float(w) for w in loss_weights]


def check_f_divergence(kind: str, loss_types: Sequence[str]) -> None:
    """Refuse an unknown ``f_divergence_type``, or one the chosen losses have no f-DPO form for."""
    if kind not in F_DIVERGENCES:
        raise ValueError(f"f_divergence_type must be one of {F_DIVERGENCES}, got {kind!r}")
    unsupported = [name for name in loss_types if name not in F_DIVERGENCE_LOSSES]
    if kind != "reverse_kl" and unsupported:
        raise ValueError(
            f"f_divergence_type={kind!r} is only supported for the loss types {sorted(F_DIVERGENCE_LOSSES)} "
            f"(their loss depends on the chosen − rejected score difference only); {unsupported} "
            f"are not. Use the default f_divergence_type='reverse_kl' with these losses"
        )


def needs_reference(loss_types: Sequence[str]) -> bool:
    """Whether any of the losses needs a reference model (only SimPO-style losses do not)."""
    return any(LOSSES[name].needs_reference for name in loss_types)


def wpo_pair_weights(logps: torch.Tensor, log_sum_sq: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """WPO's per-pair weight ``w(x, y_c) · w(x, y_r)``, without gradient; inputs are ``(2B,)``, chosen first.

    Zhou et al. 2024, "WPO: Enhancing RLHF with Weighted Preference Optimization", arXiv:2406.11827,
    Eq. 2 (in TRL's form)::

        w(x, y) = exp( 1/|y| · Σ_t [ log π_θ(y_t | x, y_<t) − log Σ_v π_θ(v | x, y_<t)² ] )

    i.e. the geometric-mean token probability of ``y`` relative to how peaked each next-token
    distribution is. Off-policy preference pairs (completions the current policy would rarely sample)
    get small weights, so the update concentrates on pairs close to on-policy data. ``logps`` and
    ``log_sum_sq`` are sums over the completion tokens; the weights carry no gradient.
    """
    with torch.no_grad():
        weights = torch.exp((logps.detach() - log_sum_sq) / lengths.clamp(min=1))
        half = weights.shape[0] // 2
        return weights[:half] * weights[half:]


def combined_loss(
    p: PairLogps,
    params: LossParams,
    loss_types: Sequence[str],
    loss_weights: Sequence[float],
    pair_weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """``Σ_k w_k · mean_over_pairs(ω · loss_k(p))``: the scalar the trainer backpropagates.

    ``pair_weights`` ω (``(B,)``, e.g. :func:`wpo_pair_weights`) scales each pair's loss; 1 when None.
    """
    total = p.chosen.new_zeros(())
    for name, weight in zip(loss_types, loss_weights, strict=True):
        per_pair = LOSSES[name].fn(p, params)
        if pair_weights is not None:
            per_pair = per_pair * pair_weights.to(per_pair.dtype)
        total = total + weight * per_pair.mean()
    return total
