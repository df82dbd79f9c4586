"""The recommended pre-commit hook (``id: trainwright``), with ruff-pre-commit's semantics, run by
``pre-commit run`` in temporary git repositories on a snapshot of this checkout:

- a clean repository passes;
- a fixable finding is fixed: the hook fails because it changed a file (pre-commit says so), prints
  what it fixed, and passes on the next run;
- a finding without a safe fix fails the hook and is printed once (two hooks used to print it twice);
- the former ``trainwright-fix`` id still works, and ``trainwright-check`` never writes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from lint_helpers import GIT, run_pre_commit

pytestmark = pytest.mark.slow

PINNED = '[project]\nname = "user"\nversion = "0"\ndependencies = ["transformers>=5.0,<6"]\n'
FIXABLE = (
    "from transformers import Trainer\n\n\nclass T(Trainer):\n"
    "    def compute_loss(self, model, inputs, return_outputs=False):\n"
    "        return super().compute_loss(model, inputs, return_outputs)\n"
)
UNFIXABLE = "from transformers import Trainer\n\n\nclass U(Trainer):\n    def _save_checkpoint(self, model, trial):\n        pass\n"
CLEAN = "print('no trainer here')\n"
FINDING = re.compile(r"^\S+\.py:\d+:\d+: TW\d{3}", re.MULTILINE)


def repository(
    root: Path, hook_repo: Path, files: dict[str, str], hook_ids: tuple[str, ...] = ("trainwright",)
) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(PINNED)
    for name, text in files.items():
        (root / name).write_text(text)
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True, check=True
    )
    hooks = "".join(f"      - id: {h}\n" for h in hook_ids)
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev.stdout.strip()}\n    hooks:\n{hooks}"
    )
    subprocess.run([*GIT, "init", "-q", "."], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    return root


def run_hooks(pre_commit: str, repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return run_pre_commit(pre_commit, repo, home, "run", "--all-files")


def test_a_clean_repository_passes(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = repository(tmp_path / "repo", hook_repo, {"clean.py": CLEAN})
    result = run_hooks(pre_commit, repo, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert FINDING.findall(result.stdout) == []


def test_a_fixable_finding_is_fixed_then_passes(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = repository(tmp_path / "repo", hook_repo, {"train.py": FIXABLE})
    first = run_hooks(pre_commit, repo, pre_commit_home)
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "files were modified by this hook" in output and "fixed 1 finding in 1 file" in output
    assert FINDING.findall(output) == []  # nothing is left to report
    assert "num_items_in_batch=None" in (repo / "train.py").read_text()
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    second = run_hooks(pre_commit, repo, pre_commit_home)
    assert second.returncode == 0, second.stdout + second.stderr


def test_each_finding_left_is_printed_once(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = repository(
        tmp_path / "repo", hook_repo, {"train.py": FIXABLE, "other.py": UNFIXABLE, "clean.py": CLEAN}
    )
    result = run_hooks(pre_commit, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert FINDING.findall(output) == ["other.py:5:5: TW101"]  # once; the fixed TW301 is not listed
    assert "fixed 1 finding in 1 file" in output
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    again = run_hooks(pre_commit, repo, pre_commit_home)
    assert again.returncode == 1 and FINDING.findall(again.stdout + again.stderr) == ["other.py:5:5: TW101"]


def test_the_former_and_the_report_only_ids(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path
) -> None:
    check = repository(tmp_path / "check", hook_repo, {"train.py": FIXABLE}, ("trainwright-check",))
    result = run_hooks(pre_commit, check, pre_commit_home)
    assert result.returncode == 1 and (check / "train.py").read_text() == FIXABLE  # reported, not written
    assert FINDING.findall(result.stdout + result.stderr) == ["train.py:5:5: TW301"]
    former = repository(tmp_path / "former", hook_repo, {"train.py": FIXABLE}, ("trainwright-fix",))
    result = run_hooks(pre_commit, former, pre_commit_home)
    assert result.returncode == 1 and "num_items_in_batch=None" in (former / "train.py").read_text()
