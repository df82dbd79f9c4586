"""Acceptance: the ``trainwright`` pre-commit hook checks the project's own pin, in a real
``pre-commit try-repo`` run whose hook environment (built by pre-commit from this checkout) has no
transformers installed. Its findings must equal ``trainwright lint --transformers-version 4.45.2``'s,
and differ from the newest release's, for a pin in pyproject.toml, requirements.txt, setup.cfg and uv.lock.

The cases share one hook repository snapshot and one ``PRE_COMMIT_HOME`` (``conftest.py``): pre-commit
builds the hook's virtual environment once and reuses it for the same repository and revision.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import GIT, run_pre_commit
from lint_helpers import VERSION_SENSITIVE_TRAINER as TRAINER

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FINDING = re.compile(r"^(\S+:\d+:\d+: TW\d{3})\b", re.MULTILINE)
PINS = {
    "pyproject.toml": (
        '[project]\nname = "user"\nversion = "0"\ndependencies = ["transformers>=4.44,<4.46"]\n',
        "transformers >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2",
    ),
    "requirements.txt": (
        "numpy\ntransformers>=4.44,<4.46\n",
        "transformers >=4.44,<4.46 (requirements.txt) → 4.44.0–4.45.2",
    ),
    "setup.cfg": (
        "[metadata]\nname = user\n[options]\ninstall_requires =\n    transformers>=4.44,<4.46\n",
        "transformers >=4.44,<4.46 (setup.cfg) → 4.44.0–4.45.2",
    ),
    "uv.lock": (
        (
            'version = 1\n\n[[package]]\nname = "transformers"\nversion = "4.45.2"\n'
            'source = { registry = "https://pypi.org/simple" }\n'
        ),
        "transformers 4.45.2 (uv.lock)",
    ),
}


def user_repo(root: Path, pin_file: str, pin: str) -> Path:
    root.mkdir()
    (root / "train.py").write_text(TRAINER)
    (root / pin_file).write_text(pin)
    subprocess.run([*GIT, "init", "-q", "."], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    return root


def cli_findings(repo: Path, version: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "--transformers-version", version, "."],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return FINDING.findall(result.stdout)


@pytest.mark.parametrize("pin_file", sorted(PINS))
def test_hook_checks_the_projects_pin(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path, pin_file: str
) -> None:
    pin, summary = PINS[pin_file]
    repo = user_repo(tmp_path / "user_repo", pin_file, pin)
    result = try_repo(pre_commit, hook_repo, repo, pre_commit_home, "trainwright", "--all-files")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert (
        f"1 finding in 1 file (1 with Trainer subclasses or callbacks)\nchecked against {summary}\n" in output
    )
    hook = FINDING.findall(output)
    assert hook == cli_findings(repo, "4.45.2") == ["train.py:9:5: TW101"]
    assert hook != cli_findings(repo, "5.24.0")
    # No "no requirement found" fallback, and no TRL note: the hook env has neither library.
    assert "trainwright lint: warning" not in output and "; trl " not in output


def try_repo(
    pre_commit: str, hook_repo: Path, repo: Path, home: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    return run_pre_commit(pre_commit, repo, home, "try-repo", str(hook_repo), *args)


SAVE_CHECKPOINT = """\
from transformers import Trainer


class T(Trainer):
    def _save_checkpoint(self, model, trial, metrics=None):
        super()._save_checkpoint(model, trial, metrics=metrics)
"""


@pytest.mark.parametrize(("pin", "removed"), [(">=4.44,<4.46", False), (">=4.46", True)])
def test_fix_hook_keeps_metrics_where_the_range_needs_it(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path, pin: str, removed: bool
) -> None:
    """On 4.44-4.45 `metrics=` drives `metric_for_best_model`: removing it would silently stop
    best-checkpoint tracking. From 4.46 on the Trainer works the metric out itself."""
    repo = tmp_path / "user_repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        f'[project]\nname = "user"\nversion = "0"\ndependencies = ["transformers{pin}"]\n', encoding="utf-8"
    )
    (repo / "train.py").write_text(SAVE_CHECKPOINT, encoding="utf-8")
    subprocess.run([*GIT, "init", "-q", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    result = try_repo(pre_commit, hook_repo, repo, pre_commit_home, "trainwright-fix", "--all-files")
    fixed = (repo / "train.py").read_text(encoding="utf-8")
    if removed:
        assert result.returncode == 1, result.stdout + result.stderr  # files were modified by this hook
        assert "super()._save_checkpoint(model, trial)\n" in fixed
    else:
        assert fixed == SAVE_CHECKPOINT, result.stdout + result.stderr


def test_hooks_on_one_file_touch_and_report_only_that_file(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path
) -> None:
    """`--files sub.py` with both hooks: the base class in base.py has fixable findings of its own; it
    is read to check sub.py, but never reported and never rewritten."""
    repo = tmp_path / "user_repo"
    package = repo / "src" / "myproj"
    package.mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "myproj"\nversion = "0"\ndependencies = ["transformers>=5.0,<6"]\n',
        encoding="utf-8",
    )
    (package / "__init__.py").write_text("", encoding="utf-8")
    base = (
        "from transformers import Trainer\n\n\nclass BaseTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        return super().compute_loss(model, inputs, return_outputs)\n"
    )
    sub = (
        "from myproj.base import BaseTrainer\n\n\nclass SubTrainer(BaseTrainer):\n"
        "    def log(self, logs):\n        super().log(logs)\n"
    )
    (package / "base.py").write_bytes(base.encode())
    (package / "sub.py").write_bytes(sub.encode())
    subprocess.run([*GIT, "init", "-q", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    result = try_repo(pre_commit, hook_repo, repo, pre_commit_home, "--files", "src/myproj/sub.py")
    output = result.stdout + result.stderr
    reported = FINDING.findall(output)
    assert all(r.startswith("src/myproj/sub.py:") for r in reported), output
    assert "fixed 1 finding in 1 file" in output  # sub.py's log(): base.py's own finding is not fixed
    after = {p: p.read_bytes() for p in before}
    changed = sorted(str(p.relative_to(repo)) for p in before if before[p] != after[p])
    assert changed in ([], ["src/myproj/sub.py"]), changed
    assert after[package / "base.py"] == base.encode()
