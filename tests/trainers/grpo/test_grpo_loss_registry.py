"""GRPO's loss registry is the one owner of each loss type: the config's choices, the configuration notes, the
TRL-fields note and the docs table are derived from it, so a loss registered once appears in all of them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

import torch

from trainwright import GRPOConfig
from trainwright.trainers.grpo import loss_types
from trainwright.trainers.grpo.config import loss_setting_notes, token_summed_losses
from trainwright.trainers.grpo.loss import grpo_loss
from trainwright.trainers.grpo.loss_types import GRPOLossSpec, PolicyInputs
from trainwright.trainers.grpo.trl_fields import GRPO_FIELDS

DOCS = Path(__file__).resolve().parents[3] / "docs" / "trainers.md"
THROWAWAY = "half_dapo_for_a_test"


def _half_clipped(inputs: PolicyInputs, stats: dict[str, torch.Tensor]) -> torch.Tensor:
    return 0.5 * loss_types.clipped_surrogate(inputs, stats)


def test_derived_sets_are_the_former_hand_kept_lists() -> None:
    assert loss_types.loss_type_names() == (
        "grpo",
        "bnpo",
        "dr_grpo",
        "dapo",
        "cispo",
        "sapo",
        "luspo",
        "vespo",
    )
    assert token_summed_losses() == ("bnpo", "dr_grpo", "dapo", "cispo")
    clipped = loss_types.losses_where(lambda spec: spec.policy_term is loss_types.clipped_surrogate)
    assert clipped == ("grpo", "bnpo", "dr_grpo", "dapo", "luspo")
    assert loss_types.losses_where(lambda spec: spec.aggregation is loss_types.WINDOW) == (
        "dapo",
        "cispo",
        "vespo",
    )
    assert (
        GRPO_FIELDS["loss_type"].note == "grpo, bnpo, dr_grpo, dapo (the default), cispo, sapo, luspo, vespo"
    )


def test_every_entry_declares_formula_paper_and_the_options_it_reads() -> None:
    fields = set(GRPOConfig.__dataclass_fields__)
    for name, spec in loss_types.LOSSES.items():
        assert spec.formula and "arXiv:" in spec.paper or name == "bnpo", name
        assert set(spec.all_options) <= fields, (name, set(spec.all_options) - fields)
        assert spec.ratio_level in (None, "token", "sequence")
        assert bool(spec.ratio_level) == bool(spec.ratio_level_note), name


def test_docs_hold_the_rendered_loss_table() -> None:
    assert loss_types.render_markdown() in DOCS.read_text(encoding="utf-8"), (
        "docs/trainers.md is out of date: paste loss_types.render_markdown() under 'GRPO loss types'"
    )


def test_a_registered_loss_reaches_config_docs_table_and_trl_note(tmp_path) -> None:
    with pytest.raises(ValueError, match=f"loss_type='{THROWAWAY}' is not supported"):
        GRPOConfig(output_dir=str(tmp_path), loss_type=THROWAWAY)
    spec = GRPOLossSpec(
        "½ of the clipped surrogate",
        "none (a test's throw-away loss)",
        _half_clipped,
        loss_types.WINDOW,
        ("epsilon", "epsilon_high"),
        ("clip_ratio/low_mean",),
        ratio_level="token",
        ratio_level_note="token only",
    )
    loss_types.register(THROWAWAY, spec)
    try:
        assert THROWAWAY in loss_types.loss_type_names()
        config = GRPOConfig(
            output_dir=str(tmp_path), loss_type=THROWAWAY, importance_sampling_level="sequence"
        )
        assert loss_setting_notes(config) == ["token only"]
        assert f"| `{THROWAWAY}` | ½ of the clipped surrogate |" in loss_types.render_markdown()
        assert GRPO_FIELDS["loss_type"].note.endswith(f", vespo, {THROWAWAY}")
        logps = torch.tensor([[-1.0, -2.0, -0.5], [-0.3, -1.2, -0.7]], requires_grad=True)
        advantages, mask = torch.tensor([1.0, -1.0]), torch.tensor([[1, 1, 0], [1, 1, 1]])
        ours = grpo_loss(logps, advantages, mask, loss_type=THROWAWAY, tokens_per_micro_step=4.0)
        dapo = grpo_loss(logps, advantages, mask, loss_type="dapo", tokens_per_micro_step=4.0)
        assert torch.equal(ours.loss, 0.5 * dapo.loss)
        with pytest.raises(ValueError, match="already registered"):
            loss_types.register(THROWAWAY, spec)
    finally:
        loss_types.unregister(THROWAWAY)
    assert THROWAWAY not in loss_types.render_markdown() and THROWAWAY not in GRPO_FIELDS["loss_type"].note
    with pytest.raises(ValueError, match=f"loss_type='{THROWAWAY}' is not supported"):
        GRPOConfig(output_dir=str(tmp_path), loss_type=THROWAWAY)


def test_an_unknown_loss_type_names_the_registered_ones() -> None:
    logps, mask = torch.zeros(1, 2), torch.ones(1, 2)
    with pytest.raises(ValueError, match="choose grpo, bnpo, dr_grpo, dapo, cispo, sapo, luspo or vespo"):
        grpo_loss(logps, torch.zeros(1), mask, loss_type="ppo")
