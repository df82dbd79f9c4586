"""``TrainingArguments`` / TRL config field history, ``__init__`` argument history and renames.

Checked against the committed data, and against the installed transformers and TRL through
``dataclasses.fields`` (live introspection, like ``test_catalog_live.py``).
"""

from __future__ import annotations

import ast
import dataclasses

import pytest

from trainwright.catalog import Rename, installed_version, load_catalog

ARGS = "transformers.training_args.TrainingArguments"


def test_field_history_of_renamed_fields() -> None:
    catalog = load_catalog()
    assert "evaluation_strategy" in catalog.at("4.40.2").argument_fields()
    assert "evaluation_strategy" not in catalog.at("5.0.0").argument_fields()
    assert catalog.argument_history("evaluation_strategy") == ("4.36.0", "4.50.3")
    assert catalog.argument_history("eval_strategy") == ("4.41.0", None)  # its real first release
    assert catalog.argument_history("no_such_field") is None
    assert catalog.argument_ranges("group_by_length") == (("4.36.0", "5.1.0"),)


def test_trainer_init_parameters_come_from_the_method_catalogue() -> None:
    catalog = load_catalog()
    assert catalog.argument_history("tokenizer", cls="Trainer") == ("4.36.0", "4.45.2")
    assert catalog.argument_history("processing_class", cls="Trainer") == ("4.46.0", None)
    assert catalog.argument_history("model", cls="Seq2SeqTrainer") == ("4.36.0", None)


def test_fields_are_param_like_and_inherited_in_dataclass_order() -> None:
    view = load_catalog().at("5.24.0")
    fields = view.argument_fields("Seq2SeqTrainingArguments")
    base = view.argument_fields("TrainingArguments")
    assert list(fields)[: len(base)] == list(base)
    assert (
        fields["predict_with_generate"].owner == "transformers.training_args_seq2seq.Seq2SeqTrainingArguments"
    )
    assert fields["output_dir"].owner == ARGS
    field = base["learning_rate"]
    assert field.kind == "POSITIONAL_OR_KEYWORD" and field.has_default and field.default == "5e-05"
    assert view.argument_fields("NoSuchArguments") == {}


def test_renames_derived_from_the_source() -> None:
    catalog = load_catalog()
    rename = catalog.renamed_argument("evaluation_strategy")
    assert rename == Rename(
        old="evaluation_strategy",
        new="eval_strategy",
        new_since="4.41.0",
        old_until="4.50.3",
        exact=True,
        evidence=rename.evidence if rename else "",
        cls=ARGS,
    )
    assert rename is not None and "self.eval_strategy = self.evaluation_strategy" in rename.evidence
    tokenizer = catalog.renamed_argument("tokenizer", cls="Trainer")
    assert tokenizer is not None and tokenizer.new == "processing_class"
    # The parameter left the signature in 4.46.0, but @deprecate_kwarg accepted it through 4.57.
    assert (tokenizer.new_since, tokenizer.old_until) == ("4.46.0", "4.57.6")
    hub = catalog.renamed_argument("push_to_hub_token")
    assert hub is not None and (hub.new, hub.old_until) == ("hub_token", "4.57.6")
    # Inherited by the subclass.
    assert catalog.renamed_argument("evaluation_strategy", cls="Seq2SeqTrainingArguments") is not None
    assert catalog.renamed_argument("learning_rate") is None


def test_not_one_to_one_replacements_only_when_asked() -> None:
    catalog = load_catalog()
    assert catalog.renamed_argument("include_inputs_for_metrics") is None
    hint = catalog.renamed_argument("include_inputs_for_metrics", exact_only=False)
    assert hint is not None and hint.new == "include_for_metrics" and not hint.exact
    assert '["inputs"]' in hint.evidence
    per_gpu = catalog.renamed_argument("per_gpu_train_batch_size")  # hand-curated as exact
    assert (
        per_gpu is not None and per_gpu.new == "per_device_train_batch_size" and per_gpu.old_until == "4.57.6"
    )
    renames = catalog.argument_renames()
    assert {r.old for r in renames} >= {"evaluation_strategy", "no_cuda", "torchdynamo", "adafactor"}
    assert all(r.new for r in renames)


def test_trl_config_fields_and_renames() -> None:
    catalog = load_catalog("trl")
    assert catalog.argument_history("max_seq_length", cls="SFTConfig") == ("0.19.1", "0.19.1")
    rename = catalog.renamed_argument("max_seq_length", cls="SFTConfig")
    assert rename is not None and (rename.new, rename.old_until) == ("max_length", "0.19.1")
    fields = catalog.at("1.16.0").argument_fields("GRPOConfig")
    assert "num_generations" in fields and "learning_rate" in fields  # GRPOConfig redefines learning_rate
    assert "output_dir" not in fields  # TrainingArguments' own fields need the transformers release
    with_base = catalog.at("1.16.0").argument_fields("GRPOConfig", base_version="5.24.0")
    assert "output_dir" in with_base and with_base["learning_rate"].owner.startswith("trl.")


# ----------------------------------------------------------------------------------- live introspection


def _literal(text: str | None) -> object:
    try:
        return ast.literal_eval(text) if text is not None else dataclasses.MISSING
    except (ValueError, SyntaxError):
        return NotImplemented  # not a literal (an enum member, a call): only its presence is compared


def _compare(live_fields: tuple[dataclasses.Field, ...], catalogued) -> None:  # type: ignore[no-untyped-def, type-arg]
    assert [f.name for f in live_fields] == list(catalogued)
    for f in live_fields:
        entry = catalogued[f.name]
        assert entry.init == f.init, f.name
        assert (entry.default_factory is not None) == (f.default_factory is not dataclasses.MISSING), f.name
        if entry.default_factory is None:
            expected = _literal(entry.default)
            if expected is not NotImplemented:
                assert f.default == expected, f.name


@pytest.mark.parametrize("cls_name", ["TrainingArguments", "Seq2SeqTrainingArguments"])
def test_fields_match_the_installed_transformers(cls_name: str) -> None:
    transformers = pytest.importorskip("transformers")
    catalog = load_catalog()
    version = installed_version("transformers")
    if version not in catalog.versions:
        pytest.skip(f"transformers {version} is not catalogued")
    _compare(
        dataclasses.fields(getattr(transformers, cls_name)), catalog.at(version).argument_fields(cls_name)
    )


@pytest.mark.parametrize("cls_name", ["GRPOConfig", "SFTConfig", "DPOConfig", "RewardConfig", "ModelConfig"])
def test_trl_config_fields_match_the_installed_trl(cls_name: str) -> None:
    trl = pytest.importorskip("trl")
    catalog = load_catalog("trl")
    version = installed_version("trl")
    base = installed_version("transformers")
    if version not in catalog.versions or base not in load_catalog().versions:
        pytest.skip("installed trl or transformers is not catalogued")
    fields = catalog.at(version).argument_fields(cls_name, base_version=base)
    _compare(dataclasses.fields(getattr(trl, cls_name)), fields)
