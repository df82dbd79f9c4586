"""Fixtures for the linter tests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from lint_helpers import FIXTURES


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def fix_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fix fixtures as a project's ``src/``, plus a file that does not parse; the working directory."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "fix", root / "src")
    (root / "src" / "broken.py").write_text("from transformers import Trainer\nclass T(Trainer:\n    pass\n")
    monkeypatch.chdir(root)
    return root


@pytest.fixture(autouse=True)
def _width_not_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under pytest the process environment holds ``COLUMNS=80`` (set with ``putenv``, so that
    ``os.environ`` may not show it, and every subprocess inherits it); a user's pipe in CI has no
    ``COLUMNS``, and there the CLI keeps diagnostics one line each. Tests that want a width set
    ``COLUMNS`` themselves."""
    monkeypatch.delenv("COLUMNS", raising=False)
    os.unsetenv("COLUMNS")


# ------------------------------------------------------------------------------------ pre-commit runs
# One hook repository snapshot and one PRE_COMMIT_HOME per test process: pre-commit builds a hook's
# virtual environment once per repository and revision (about half a minute), and every module that
# runs the hooks of this checkout shares it.


@pytest.fixture(scope="session")
def pre_commit() -> str:
    import sys

    found = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    if not Path(found).exists():
        pytest.skip("pre-commit is not installed")
    return found


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed snapshot of this checkout (its working tree may hold uncommitted files)."""
    from lint_helpers import snapshot_hook_repo

    return snapshot_hook_repo(tmp_path_factory.mktemp("hook_repo"))


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre_commit_home")
