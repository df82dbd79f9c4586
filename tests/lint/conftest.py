"""Fixtures for the linter tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lint_helpers import FIXTURES


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fix fixtures as a project's ``src/``, plus a file that does not parse; the working directory."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "fix", root / "src")
    (root / "src" / "broken.py").write_text("from transformers import Trainer\nclass T(Trainer:\n    pass\n")
    monkeypatch.chdir(root)
    return root


@pytest.fixture(autouse=True)
def _width_not_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist's workers export ``COLUMNS=80``; without it (a plain ``pytest`` run, a pipe in
    CI) the CLI keeps diagnostics one line each. Tests that want a width set ``COLUMNS`` themselves."""
    monkeypatch.delenv("COLUMNS", raising=False)
