"""Docs stay current and build: the loop diagram matches the catalogue, mkdocs builds in strict mode."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_training_loop_diagram_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "draw_training_loop.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_training_loop_diagram_follows_the_release(tmp_path: Path) -> None:
    old = tmp_path / "old.svg"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "draw_training_loop.py"),
            "--transformers-version",
            "4.45.2",
            "-o",
            str(old),
        ],
        check=True,
        capture_output=True,
    )
    newest = (ROOT / "docs" / "img" / "training-loop.svg").read_text()
    # get_batch_samples arrived in 4.46 and on_push_begin in 5.0: absent from the 4.45 picture.
    assert "get_batch_samples()" in newest and "get_batch_samples()" not in old.read_text()
    assert ">on_push_begin<" in newest and ">on_push_begin<" not in old.read_text()


@pytest.mark.skipif(
    shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists(),
    reason="mkdocs is part of the dev extra",
)
def test_mkdocs_builds_strict(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
