"""The pre-commit hook, installed and run by ``pre-commit try-repo`` in temporary git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from lint_helpers import run_pre_commit

ROOT = Path(__file__).resolve().parents[2]


def test_hook_manifest() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    hook = by_id["trainwright"]  # the recommended one: lint with the safe fixes
    assert hook["types"] == ["python"] and hook["language"] == "python" and hook["require_serial"]
    assert hook["entry"] == "trainwright lint --fix --force-exclude"
    assert by_id["trainwright-check"]["entry"] == "trainwright lint --force-exclude"  # never writes
    assert by_id["trainwright-fix"]["entry"] == hook["entry"]  # the former id, kept working


@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path) -> None:
    git = ["git", "-c", "user.email=test@example.com", "-c", "user.name=test"]

    user_repo = tmp_path / "user_repo"
    user_repo.mkdir()
    (user_repo / "train.py").write_text(
        "from transformers import Trainer\n\nclass T(Trainer):\n    def _save_checkpoint(self, model, trial):\n        pass\n"
    )
    (user_repo / "clean.py").write_text("print('no trainer here')\n")
    subprocess.run([*git, "init", "-q", "."], cwd=user_repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=user_repo, check=True)
    result = run_pre_commit(
        pre_commit, user_repo, pre_commit_home, "try-repo", str(hook_repo), "trainwright", "--all-files"
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:4:5: TW101" in result.stdout
    assert "clean.py:" not in result.stdout
