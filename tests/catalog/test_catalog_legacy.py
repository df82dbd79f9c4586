"""Trainer methods of releases older than the catalogue (``data/transformers-legacy.json``)."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

from trainwright.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]


def _build_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "build_legacy_names", ROOT / "scripts" / "build_legacy_names.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_removed_pre_catalogue_hook_is_known_with_its_sampled_range() -> None:
    found = load_catalog().legacy_method("_load_state_dict_in_model")
    assert found is not None
    assert (found.first_seen, found.last_seen, found.gone_by) == ("4.10.3", "4.17.0", "4.22.2")


def test_seq2seq_trainer_inherits_the_legacy_trainer_names() -> None:
    assert load_catalog().legacy_method("init_git_repo", cls="Seq2SeqTrainer") is not None


def test_legacy_names_never_overlap_the_catalogue() -> None:
    catalog = load_catalog()
    for name in ("train", "compute_loss", "prediction_loop", "_save_checkpoint"):
        assert catalog.legacy_method(name) is None
    data = catalog.legacy_method("init_git_repo")
    assert data is not None and not catalog.ever_defined("init_git_repo")


def test_a_library_without_legacy_data_has_none() -> None:
    assert load_catalog("trl").legacy_method("get_batch_loss_metrics", cls="DPOTrainer") is None


def _wheel(path: Path, version: str, body: str) -> Path:
    wheel = path / f"transformers-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("transformers/trainer.py", f"class Trainer:\n{body}")
    return wheel


def test_build_keeps_only_names_no_catalogued_release_defines(tmp_path: Path) -> None:
    build = _build_module().build
    old = _wheel(tmp_path, "4.1.0", "    def train(self): pass\n    def _old_hook(self): pass\n")
    newer = _wheel(tmp_path, "4.2.0", "    def train(self): pass\n")
    catalogued = _wheel(tmp_path, "4.40.0", "    def _new_only(self): pass\n")
    data = build([newer, old, catalogued])
    assert data["sampled"] == ["4.1.0", "4.2.0"]  # the catalogued release is not read again
    assert data["classes"]["Trainer"] == {"_old_hook": ["4.1.0", "4.1.0", "4.2.0"]}
