"""``trainwright.testing.releases``: an installed release is reused, and a test skips only offline."""

from __future__ import annotations

from pathlib import Path

from trainwright.testing.releases import (
    ReleaseUnavailable,
    declared_range,
    ensure,
    installed,
    missing,
    range_floor,
    release_dir,
    requirements,
)


def test_an_installed_release_is_reused_without_pip(tmp_path: Path) -> None:
    folder = release_dir("4.46.3", tmp_path)
    (folder / "transformers").mkdir(parents=True)
    (folder / "transformers" / "__init__.py").write_text("__version__ = '4.46.3'\n")
    assert not installed("4.46.3", tmp_path)  # not marked complete: a broken install is redone
    (folder / ".complete").write_text(" ".join(requirements("4.46.3")) + "\n")
    assert installed("4.46.3", tmp_path) and ensure("4.46.3", tmp_path) == folder


def test_a_folder_installed_before_a_companion_was_added_gets_only_the_missing_ones(tmp_path: Path) -> None:
    folder = release_dir("4.46.3", tmp_path)
    (folder / "transformers").mkdir(parents=True)
    (folder / "transformers" / "__init__.py").write_text("__version__ = '4.46.3'\n")
    before = [r for r in requirements("4.46.3") if not r.startswith(("datasets", "httpx", "httpcore"))]
    (folder / ".complete").write_text(" ".join(before) + "\n")
    assert missing("4.46.3", tmp_path) == ["datasets==4.8.5", "httpx<1", "httpcore"]


def test_only_a_missing_index_counts_as_offline() -> None:
    assert ReleaseUnavailable("pip: ... Max retries exceeded with url: /simple/transformers/").offline
    assert not ReleaseUnavailable("pip: error: invalid requirement").offline


def test_trl_code_is_judged_on_the_range_trl_declares() -> None:
    # TRL 1.16's Requires-Dist says transformers>=4.56.2: its own code never imports on 4.46
    declared = declared_range("trl", ">=4.44,<6")
    assert declared.startswith(">=4.44,<6,") and range_floor(declared) == "4.56.2"
    assert declared_range("libcst", ">=4.44,<6") == ">=4.44,<6"  # declares no transformers
    assert range_floor("<6") is None


def test_the_trl_floor_takes_its_own_tokenizers_and_a_hub_before_1_0() -> None:
    # 4.56.2 checks tokenizers>=0.22,<=0.23.0 at import; the 4.4x pins would break it
    needs = requirements("4.56.2")
    assert "tokenizers>=0.22,<=0.23.0" in needs and "huggingface_hub<1.0" in needs
    assert not any(r.startswith("trl") for r in needs)  # the venv's TRL 1.16 serves it
    assert "tokenizers<0.21" in requirements("4.46.3") and requirements("5.24.0") == ["transformers==5.24.0"]
