"""Every TRL 1.16 GRPOConfig / DPOConfig field is in trainwright's table (and the docs), and our configs
accept or refuse it as the table says; non-finite float knobs are refused at construction, by name."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import trainwright
from trainwright.trainers.common.trl_fields import (
    STATUSES,
    SUPPORTED,
    UNSUPPORTED,
    UnsupportedTRLOptionError,
    render_markdown,
)
from trainwright.trainers.dpo.trl_fields import DPO_FIELDS
from trainwright.trainers.grpo.trl_fields import GRPO_FIELDS

TRL_FIELDS = {"GRPOConfig": GRPO_FIELDS, "DPOConfig": DPO_FIELDS}

trl = pytest.importorskip("trl")
from transformers import TrainingArguments

DOCS = Path(__file__).resolve().parents[2] / "docs" / "trainers.md"
TA_FIELDS = {f.name: f for f in dataclasses.fields(TrainingArguments)}


def _default(spec: dataclasses.Field):
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    return dataclasses.MISSING


def _trl_fields(config_name: str) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(getattr(trl, config_name))}


def _must_be_listed(config_name: str) -> set[str]:
    """TRL's own fields, and the TrainingArguments fields whose default TRL changes."""
    return {
        name
        for name, spec in _trl_fields(config_name).items()
        if name not in TA_FIELDS or repr(_default(spec)) != repr(_default(TA_FIELDS[name]))
    }


@pytest.mark.parametrize("config_name", sorted(TRL_FIELDS))
def test_table_covers_every_trl_field(config_name) -> None:
    table = TRL_FIELDS[config_name]
    required = _must_be_listed(config_name)
    assert len(required) > 20
    assert sorted(required - set(table)) == [], "TRL fields missing from the trl_fields.py table"
    assert sorted(set(table) - set(_trl_fields(config_name))) == [], "rows for fields TRL does not have"
    assert {entry.status for entry in table.values()} <= set(STATUSES)
    assert all(
        entry.note for entry in table.values() if entry.status != SUPPORTED
    )  # every difference says why


@pytest.mark.parametrize("config_name", sorted(TRL_FIELDS))
def test_docs_hold_the_rendered_table(config_name) -> None:
    assert render_markdown(TRL_FIELDS[config_name]) in DOCS.read_text(encoding="utf-8"), (
        f"docs/trainers.md is out of date: paste render_markdown({config_name}'s trl_fields) into it"
    )


CASES = [(config_name, name) for config_name, table in sorted(TRL_FIELDS.items()) for name in sorted(table)]


@pytest.mark.parametrize(("config_name", "name"), CASES)
def test_config_accepts_or_refuses_as_the_table_says(tmp_path, config_name, name) -> None:
    ours = getattr(trainwright, config_name)
    value = _default(_trl_fields(config_name)[name])  # TRL's own default: valid for TRL by definition
    entry = TRL_FIELDS[config_name][name]
    base = {"output_dir": str(tmp_path), "use_cpu": True, "report_to": []}
    if entry.status == UNSUPPORTED:
        with pytest.raises(UnsupportedTRLOptionError) as info:
            ours(**base, **{name: value})
        message = str(info.value)
        assert isinstance(info.value, TypeError)
        assert re.search(
            rf"\b{name}\b.*TRL {config_name} option\(s\) that trainwright does not support", message
        )
        assert entry.note in message  # and why
        assert "unexpected keyword argument" not in message
    else:
        config = ours(**base, **{name: value})
        assert hasattr(config, name)
        if value is not None:
            assert getattr(config, name) == value


def test_unsupported_options_are_all_named_at_once(tmp_path) -> None:
    with pytest.raises(
        TypeError, match=r"got use_vllm, log_multimodal: .*use_vllm: vLLM is not built in.*log_multimodal"
    ):
        trainwright.GRPOConfig(output_dir=str(tmp_path), use_vllm=True, log_multimodal=False)
    with pytest.raises(TypeError, match=r"activation_offloading: activations are not offloaded"):
        trainwright.DPOConfig(output_dir=str(tmp_path), activation_offloading=True)
    with pytest.raises(
        TypeError, match="unexpected keyword argument 'not_a_field'"
    ):  # not TRL's: Python's error
        trainwright.DPOConfig(output_dir=str(tmp_path), not_a_field=1)


# ---- non-finite knobs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config_name", "field", "value"),
    [
        ("DPOConfig", "beta", float("nan")),
        ("DPOConfig", "label_smoothing", float("nan")),
        ("DPOConfig", "discopop_tau", float("inf")),
        ("DPOConfig", "ref_model_mixup_alpha", float("nan")),
        ("DPOConfig", "learning_rate", float("nan")),
        ("DPOConfig", "loss_weights", [1.0, float("inf")]),
        ("GRPOConfig", "beta", float("nan")),
        ("GRPOConfig", "epsilon", float("inf")),
        ("GRPOConfig", "epsilon_high", float("nan")),
        ("GRPOConfig", "temperature", float("nan")),
        ("GRPOConfig", "top_p", float("nan")),
        ("GRPOConfig", "repetition_penalty", float("inf")),
        ("GRPOConfig", "reward_weights", [float("nan")]),
        ("GRPOConfig", "weight_decay", float("-inf")),
        ("GRPOConfig", "max_grad_norm", float("nan")),
    ],
)
def test_non_finite_knobs_are_refused_by_name(tmp_path, config_name, field, value) -> None:
    extra = {"loss_type": ["sigmoid", "sft"]} if field == "loss_weights" else {}
    name = re.escape(field) + (r"\[\d\]" if isinstance(value, list) else "")
    with pytest.raises(ValueError, match=rf"{config_name}: {name}=.* is not a finite number"):
        getattr(trainwright, config_name)(output_dir=str(tmp_path), **extra, **{field: value})


def test_infinite_max_grad_norm_means_never_clip(tmp_path) -> None:
    assert trainwright.DPOConfig(output_dir=str(tmp_path), max_grad_norm=float("inf")).max_grad_norm == float(
        "inf"
    )
