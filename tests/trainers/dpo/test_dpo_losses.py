"""Every loss type against its formula written out here with plain ``math`` on hand-picked log-probs."""

from __future__ import annotations

import math

import pytest
import torch

from trainwright.trainers.dpo.losses import LOSSES, LossParams, PairLogps, check_loss_types, combined_loss

# three pairs of summed completion log-probs, chosen lengths and rejected lengths
POLICY_C = [-5.0, -7.0, -3.0]
POLICY_R = [-6.0, -4.0, -9.0]
REF_C = [-5.5, -6.0, -4.0]
REF_R = [-5.0, -5.0, -8.0]
LEN_C = [3, 5, 2]
LEN_R = [4, 2, 6]
BETA, EPS, TAU, GAMMA = 0.3, 0.1, 0.05, 0.4


def logsig(x: float) -> float:
    return -math.log1p(math.exp(-x))


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def pairs(with_ref: bool = True) -> PairLogps:
    t = lambda xs: torch.tensor(xs, dtype=torch.float64)
    return PairLogps(
        chosen=t(POLICY_C),
        rejected=t(POLICY_R),
        ref_chosen=t(REF_C) if with_ref else None,
        ref_rejected=t(REF_R) if with_ref else None,
        chosen_lengths=t(LEN_C),
        rejected_lengths=t(LEN_R),
    )


def expected_per_pair(name: str) -> list[float]:
    out = []
    dc_all = [p - r for p, r in zip(POLICY_C, REF_C)]
    dr_all = [p - r for p, r in zip(POLICY_R, REF_R)]
    # AOT sorts across the batch
    pol_sorted = sorted(c - r for c, r in zip(POLICY_C, POLICY_R))
    ref_sorted = sorted(c - r for c, r in zip(REF_C, REF_R))
    dc_sorted, dr_sorted = sorted(dc_all), sorted(dr_all)
    sft = -sum(POLICY_C) / sum(LEN_C)
    for i in range(3):
        dc, dr = dc_all[i], dr_all[i]
        z = BETA * (dc - dr)
        if name == "sigmoid":
            v = -logsig(z)
        elif name == "cdpo":
            v = -(1 - EPS) * logsig(z) - EPS * logsig(-z)
        elif name == "hinge":
            v = max(0.0, 1 - z)
        elif name == "ipo":
            v = (dc / LEN_C[i] - dr / LEN_R[i] - 1 / (2 * BETA)) ** 2
        elif name == "robust":
            v = (-(1 - EPS) * logsig(z) + EPS * logsig(-z)) / (1 - 2 * EPS)
        elif name == "exo_pair":
            v = sig(z) * (logsig(z) - math.log(1 - EPS)) + sig(-z) * (logsig(-z) - math.log(EPS))
        elif name == "nca_pair":
            v = -logsig(BETA * dc) - 0.5 * logsig(-BETA * dc) - 0.5 * logsig(-BETA * dr)
        elif name == "bco_pair":
            v = -logsig(BETA * dc) - logsig(-BETA * dr)
        elif name == "sppo_hard":
            v = (dc - 1 / (2 * BETA)) ** 2 + (dr + 1 / (2 * BETA)) ** 2
        elif name == "aot":
            d = BETA * (pol_sorted[i] - ref_sorted[i])
            v = -(1 - EPS) * logsig(d) - EPS * logsig(-d)
        elif name == "aot_unpaired":
            d = BETA * (dc_sorted[i] - dr_sorted[i])
            v = -(1 - EPS) * logsig(d) - EPS * logsig(-d)
        elif name == "apo_zero":
            v = (1 - sig(BETA * dc)) + sig(BETA * dr)
        elif name == "apo_down":
            v = sig(BETA * dc) + (1 - sig(z))
        elif name == "discopop":
            m = sig(z / TAU)
            v = (1 - m) * -logsig(z) + m * math.exp(-z)
        elif name == "sigmoid_norm":
            v = -logsig(BETA * (dc / LEN_C[i] - dr / LEN_R[i]))
        elif name == "sft":
            v = sft
        elif name == "simpo":
            v = -logsig(BETA * (POLICY_C[i] / LEN_C[i] - POLICY_R[i] / LEN_R[i]) - GAMMA)
        else:  # pragma: no cover - a new loss needs its formula here
            raise AssertionError(f"no written-out formula for {name}")
        out.append(v)
    return out


PARAMS = LossParams(beta=BETA, label_smoothing=EPS, discopop_tau=TAU, simpo_gamma=GAMMA)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_dpo_loss_matches_written_formula(name: str) -> None:
    got = LOSSES[name].fn(pairs(), PARAMS)
    assert got.shape == (3,)
    assert got.tolist() == pytest.approx(expected_per_pair(name), rel=1e-10, abs=1e-12)


def test_dpo_losses_all_have_a_paper_or_formula_docstring() -> None:
    for name, spec in LOSSES.items():
        doc = spec.fn.__doc__ or ""
        assert "``" in doc, f"{name} docstring should write out its formula"


def test_dpo_reference_free_losses_ignore_reference() -> None:
    assert not LOSSES["simpo"].needs_reference
    for name in ("simpo", "sft"):
        a = LOSSES[name].fn(pairs(with_ref=True), PARAMS)
        b = LOSSES[name].fn(pairs(with_ref=False), PARAMS)
        assert torch.equal(a, b)


def test_dpo_reference_free_sigmoid_uses_policy_logps_as_rewards() -> None:
    got = LOSSES["sigmoid"].fn(pairs(with_ref=False), PARAMS).tolist()
    want = [-logsig(BETA * (c - r)) for c, r in zip(POLICY_C, POLICY_R)]
    assert got == pytest.approx(want, rel=1e-10)


def test_dpo_combined_loss_is_weighted_sum_of_means() -> None:
    total = combined_loss(pairs(), PARAMS, ["sigmoid", "sft"], [1.0, 0.5])
    want = sum(expected_per_pair("sigmoid")) / 3 + 0.5 * sum(expected_per_pair("sft")) / 3
    assert float(total) == pytest.approx(want, rel=1e-10)


def test_dpo_sigmoid_gradient_raises_chosen_lowers_rejected() -> None:
    p = pairs()
    chosen = p.chosen.clone().requires_grad_(True)
    rejected = p.rejected.clone().requires_grad_(True)
    q = PairLogps(chosen, rejected, p.ref_chosen, p.ref_rejected, p.chosen_lengths, p.rejected_lengths)
    LOSSES["sigmoid"].fn(q, PARAMS).sum().backward()
    assert (chosen.grad < 0).all() and (rejected.grad > 0).all()


def test_dpo_check_loss_types_errors() -> None:
    with pytest.raises(ValueError, match="unknown loss_type \\['sigmod'\\]"):
        check_loss_types(["sigmod"], None)
    with pytest.raises(ValueError, match="loss_weights has 1 entries but loss_type has 2"):
        check_loss_types(["sigmoid", "sft"], [1.0])
    assert check_loss_types(["sigmoid", "sft"], None) == [1.0, 1.0]
