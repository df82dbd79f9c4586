"""The pre-commit hook, installed and run by ``pre-commit try-repo`` in temporary git repositories."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lint_helpers import snapshot_hook_repo

ROOT = Path(__file__).resolve().parents[2]


def test_hook_manifest() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "trainwright"]  # trainwright-fix is issue 5's
    assert hook["id"] == "trainwright" and hook["types"] == ["python"]
    assert hook["entry"] == "trainwright lint --force-exclude" and hook["language"] == "python"


@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    if not Path(pre_commit).exists():
        pytest.skip("pre-commit is not installed")
    git = ["git", "-c", "user.email=test@example.com", "-c", "user.name=test"]
    hook_repo = snapshot_hook_repo(tmp_path / "hook_repo")

    user_repo = tmp_path / "user_repo"
    user_repo.mkdir()
    (user_repo / "train.py").write_text(
        "from transformers import Trainer\n\nclass T(Trainer):\n    def _save_checkpoint(self, model, trial):\n        pass\n"
    )
    (user_repo / "clean.py").write_text("print('no trainer here')\n")
    subprocess.run([*git, "init", "-q", "."], cwd=user_repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=user_repo, check=True)
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    result = subprocess.run(
        [pre_commit, "try-repo", str(hook_repo), "trainwright", "--all-files"],
        cwd=user_repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:4:5: TW101" in result.stdout
    assert "clean.py:" not in result.stdout
