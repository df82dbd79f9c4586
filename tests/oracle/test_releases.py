"""``trainwright.testing.releases``: an installed release is reused, and a test skips only offline."""

from __future__ import annotations

from pathlib import Path

from trainwright.testing.releases import (
    ReleaseUnavailable,
    ensure,
    installed,
    missing,
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
