"""Star-import exports, canonical class names, class graphs and callback classes.

The committed data first, then the installed transformers and TRL (imported) as the oracle for the
release they are.
"""

from __future__ import annotations

import pytest

from trainwright.catalog import installed_version, load_catalog

TRAINER = "transformers.trainer.Trainer"
CALLBACK = "transformers.trainer_callback.TrainerCallback"


def test_star_exports_of_the_trainer_module() -> None:
    catalog = load_catalog()
    exports = catalog.exports("transformers.trainer", "4.45.2")
    assert exports["Trainer"] == TRAINER
    assert exports["TrainerCallback"] == CALLBACK  # trainer.py imports it, and has no __all__
    assert exports["TrainingArguments"] == "transformers.training_args.TrainingArguments"
    assert exports["DEFAULT_PROGRESS_CALLBACK"] == "transformers.trainer_callback.ProgressCallback"
    assert "logger" not in exports and "_is_peft_model" not in exports


def test_top_level_exports_follow_the_lazy_import_structure() -> None:
    catalog = load_catalog()
    for version in (
        "4.36.0",
        "4.51.3",
        "4.52.0",
        "5.24.0",
        "5.25.0",
    ):  # both eras of transformers/__init__.py
        exports = catalog.exports("transformers", version)
        assert exports["Trainer"] == TRAINER, version
        assert exports["Seq2SeqTrainer"] == "transformers.trainer_seq2seq.Seq2SeqTrainer"
        assert exports["EarlyStoppingCallback"] == "transformers.trainer_callback.EarlyStoppingCallback"
        assert exports["Seq2SeqTrainingArguments"] == (
            "transformers.training_args_seq2seq.Seq2SeqTrainingArguments"
        )
        assert not any(".models." in target for target in exports.values())
    assert catalog.exports("transformers", "4.57.6")["PushToHubCallback"] == (
        "transformers.keras_callbacks.PushToHubCallback"
    )
    assert "PushToHubCallback" not in catalog.exports("transformers", "5.0.0")  # TensorFlow support dropped
    assert catalog.exports("transformers.keras_callbacks", "5.0.0") == {}
    assert catalog.exports("transformers.integrations")["WandbCallback"] == (
        "transformers.integrations.integration_utils.WandbCallback"
    )
    assert "transformers.trainer" in catalog.export_modules()


def test_canonical_names_and_aliases() -> None:
    catalog = load_catalog()
    assert catalog.canonical("transformers.Trainer") == TRAINER
    assert catalog.canonical(TRAINER) == TRAINER
    assert catalog.canonical("transformers.trainer.TrainerCallback") == CALLBACK
    assert catalog.canonical("transformers.integrations.WandbCallback") == (
        "transformers.integrations.integration_utils.WandbCallback"
    )
    assert catalog.canonical("transformers.NoSuchThing") is None
    assert "transformers.Trainer" in catalog.aliases(TRAINER)
    assert catalog.resolve_class("Trainer") == TRAINER
    assert catalog.resolve_class("transformers.Trainer") == TRAINER


def test_transformers_class_graph() -> None:
    view = load_catalog().at("5.24.0")
    assert view.bases("Seq2SeqTrainer") == (TRAINER,)
    assert view.bases("Trainer") == ()
    assert view.bases("transformers.integrations.integration_utils.DagsHubCallback") == (
        "transformers.integrations.integration_utils.MLflowCallback",
    )
    assert view.mro("DagsHubCallback")[:3] == (
        "transformers.integrations.integration_utils.DagsHubCallback",
        "transformers.integrations.integration_utils.MLflowCallback",
        CALLBACK,
    )
    info = view.class_info("transformers.Seq2SeqTrainingArguments")
    assert info is not None
    assert info.name == "transformers.training_args_seq2seq.Seq2SeqTrainingArguments"
    assert (
        info.module == "transformers.training_args_seq2seq" and info.short_name == "Seq2SeqTrainingArguments"
    )
    assert "transformers.Seq2SeqTrainingArguments" in info.exported_as
    assert view.class_info("NoSuchClass") is None and view.bases("NoSuchClass") == ()


def test_trainer_callbacks_versus_keras_callbacks() -> None:
    catalog = load_catalog()
    callbacks = catalog.trainer_callback_classes()
    keras = catalog.non_trainer_callback_classes()
    for name in (
        CALLBACK,
        "transformers.TrainerCallback",
        "transformers.EarlyStoppingCallback",
        "transformers.integrations.WandbCallback",
        "transformers.integrations.integration_utils.DagsHubCallback",
        "transformers.utils.notebook.NotebookProgressCallback",
        "transformers.trainer_callback.CallbackHandler",
    ):
        assert name in callbacks, name
    for name in (
        "transformers.keras_callbacks.PushToHubCallback",
        "transformers.keras_callbacks.KerasMetricCallback",
        "transformers.PushToHubCallback",
        "transformers.KerasMetricCallback",
    ):
        assert name in keras, name
    assert not callbacks & keras
    assert "transformers.PushToHubCallback" not in catalog.non_trainer_callback_classes("5.0.0")
    assert "transformers.integrations.TrackioCallback" not in catalog.trainer_callback_classes("4.36.0")


def test_trl_exports_and_class_graph() -> None:
    catalog = load_catalog("trl")
    exports = catalog.exports("trl", "1.16.0")
    assert exports["GRPOTrainer"] == "trl.trainer.grpo_trainer.GRPOTrainer"
    assert exports["GRPOConfig"] == "trl.trainer.grpo_config.GRPOConfig"
    assert exports["RichProgressCallback"] == "trl.trainer.callbacks.RichProgressCallback"
    # A module without __all__ re-exports what it imports from transformers, under transformers' name.
    assert catalog.exports("trl.trainer.grpo_trainer", "1.16.0")["TrainerCallback"] == CALLBACK
    assert catalog.canonical("trl.GRPOTrainer") == "trl.trainer.grpo_trainer.GRPOTrainer"

    view = catalog.at("1.16.0")
    assert view.bases("GRPOTrainer") == ("trl.trainer.base_trainer._BaseTrainer",)
    assert view.bases("trl.trainer.base_trainer._BaseTrainer") == (TRAINER,)
    assert view.mro("GRPOTrainer") == (
        "trl.trainer.grpo_trainer.GRPOTrainer",
        "trl.trainer.base_trainer._BaseTrainer",
        TRAINER,
    )
    assert catalog.at("0.21.0").bases("GRPOTrainer") == (TRAINER,)  # before TRL had a base class
    assert catalog.at("0.27.2").bases("GRPOTrainer") == ("trl.trainer.base_trainer.BaseTrainer",)
    info = view.class_info("GRPOConfig")
    assert info is not None and "trl.GRPOConfig" in info.exported_as


def test_trl_classes_that_moved_to_experimental_and_back() -> None:
    catalog = load_catalog("trl")
    # 0.27-1.4: trl.trainer's KTOTrainer is a deprecation shim over trl.experimental's.
    assert catalog.at("0.27.2").bases("trl.trainer.kto_trainer.KTOTrainer") == (
        "trl.experimental.kto.kto_trainer.KTOTrainer",
    )
    # 1.8+: the stable one is real again and trl.experimental.kto.KTOTrainer is the shim.
    assert catalog.at("1.8.0").bases("trl.experimental.kto.KTOTrainer") == (
        "trl.trainer.kto_trainer.KTOTrainer",
    )
    assert catalog.resolve_class("KTOTrainer", "1.8.0") == "trl.trainer.kto_trainer.KTOTrainer"
    assert (
        catalog.exports("trl.experimental.kto", "1.16.0")["KTOTrainer"] == "trl.experimental.kto.KTOTrainer"
    )


def test_trl_callbacks_are_trainer_callbacks() -> None:
    callbacks = load_catalog("trl").trainer_callback_classes("1.16.0")
    assert "trl.trainer.callbacks.RichProgressCallback" in callbacks
    assert "trl.RichProgressCallback" in callbacks
    assert not load_catalog("trl").non_trainer_callback_classes("1.16.0")


# -------------------------------------------------------------------------------- installed libraries


def _wanted(name: str) -> bool:
    return name.endswith(
        ("Trainer", "Callback", "Arguments", "Config", "Control", "State", "CallbackHandler")
    )


@pytest.mark.parametrize(
    "module",
    [
        "transformers.trainer",
        "transformers.trainer_callback",
        "transformers.trainer_seq2seq",
        "transformers.training_args",
        "transformers.integrations.integration_utils",
    ],
)
def test_star_exports_match_the_installed_module(module: str) -> None:
    pytest.importorskip("transformers")
    import importlib
    import inspect

    catalog = load_catalog()
    version = installed_version("transformers")
    if version not in catalog.versions:
        pytest.skip(f"transformers {version} is not catalogued")
    live_module = importlib.import_module(module)
    names = getattr(live_module, "__all__", None) or [n for n in vars(live_module) if not n.startswith("_")]
    live = {}
    for name in names:
        value = getattr(live_module, name, None)
        if inspect.isclass(value) and _wanted(value.__name__):
            live[name] = f"{value.__module__}.{value.__qualname__}"
    catalogued = dict(catalog.exports(module, version))
    # The catalogue also lists names bound under an ``if is_x_available():`` whose backend is missing here.
    assert set(live) <= set(catalogued), sorted(set(live) - set(catalogued))
    for name, target in live.items():
        if target.startswith("transformers."):
            assert catalogued[name] == target, name


def test_top_level_exports_match_the_installed_package() -> None:
    transformers = pytest.importorskip("transformers")
    catalog = load_catalog()
    version = installed_version("transformers")
    if version not in catalog.versions:
        pytest.skip(f"transformers {version} is not catalogued")
    exports = catalog.exports("transformers", version)
    for name in (
        "Trainer",
        "Seq2SeqTrainer",
        "TrainingArguments",
        "TrainerCallback",
        "EarlyStoppingCallback",
    ):
        value = getattr(transformers, name)
        assert exports[name] == f"{value.__module__}.{value.__qualname__}"
        assert name in transformers.__all__


def test_trl_exports_match_the_installed_package() -> None:
    trl = pytest.importorskip("trl")
    catalog = load_catalog("trl")
    version = installed_version("trl")
    if version not in catalog.versions:
        pytest.skip(f"trl {version} is not catalogued")
    exports = catalog.exports("trl", version)
    assert set(exports) == {n for n in trl.__all__ if _wanted(n)}
    for name, target in exports.items():
        value = getattr(trl, name)
        assert target == f"{value.__module__}.{value.__qualname__}", name
        view = catalog.at(version)
        live_bases = tuple(f"{b.__module__}.{b.__qualname__}" for b in value.__bases__ if b is not object)
        assert view.bases(target) == live_bases, name
