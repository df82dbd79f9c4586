"""The TRL catalogue (``data/trl.json``, built by ``scripts/build_trl_catalog.py`` from TRL wheels):
TRL's trainer classes across releases, read through the same API as the transformers catalogue."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trainwright.catalog import load_catalog, target_version
from trainwright.catalog.versions import version_key

CORE = ("GRPOTrainer", "DPOTrainer", "SFTTrainer", "KTOTrainer", "RLOOTrainer", "RewardTrainer")


@pytest.fixture(scope="module")
def trl():  # type: ignore[no-untyped-def]
    return load_catalog("trl")


def test_covers_a_dozen_releases_and_the_core_trainers(trl) -> None:  # type: ignore[no-untyped-def]
    assert trl.library == "trl"
    assert len(trl.versions) >= 10
    assert list(trl.versions) == sorted(trl.versions, key=version_key)
    assert version_key(trl.versions[0]) <= version_key("0.19.1")
    for version in (trl.versions[0], trl.newest):
        classes = set(trl.at(version).classes)
        assert set(CORE) <= classes, set(CORE) - classes


def test_private_methods_with_owner_and_history(trl) -> None:  # type: ignore[no-untyped-def]
    info = trl.at(trl.newest).method("_generate_and_score_completions", cls="GRPOTrainer")
    assert info is not None and info.private and info.owner == "GRPOTrainer" and info.library == "trl"
    assert [s.caller for s in info.call_sites] == ["_prepare_inputs"]  # called by TRL's own code
    history = trl.method_history("_generate_and_score_completions", cls="GRPOTrainer")
    assert history is not None and history.first == trl.versions[0] and history.last is None
    # Methods inherited from transformers.Trainer and not redefined by TRL are not TRL's.
    assert trl.at(trl.newest).method("_inner_training_loop", cls="GRPOTrainer") is None


def test_signatures_change_across_releases(trl) -> None:  # type: ignore[no-untyped-def]
    changed = [
        name
        for name in trl.method_names("GRPOTrainer")
        if (h := trl.method_history(name, cls="GRPOTrainer")) is not None and len(h.signatures) > 1
    ]
    assert changed, "TRL changed GRPOTrainer signatures between 0.19 and 1.16; the data must show it"


@pytest.mark.train("reads the installed TRL's version")
def test_target_version_follows_installed_trl(trl) -> None:  # type: ignore[no-untyped-def]
    from importlib.metadata import version

    assert target_version(None, library="trl") == trl.resolve_version(version("trl"))
    assert target_version("0.20.0", library="trl") == "0.19.1"  # nearest covered release below


def test_unknown_library_names_the_available_ones() -> None:
    with pytest.raises(ValueError, match="available: transformers, trl"):
        load_catalog("deepspeed")


def test_loading_never_imports_trl_or_torch() -> None:
    code = (
        "import sys, json; from trainwright.catalog import load_catalog; load_catalog('trl').at(None); "
        "print(json.dumps([m for m in ('trl', 'torch', 'transformers') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
