"""flake8 fails loudly on a target no catalogued release can stand for, as ``trainwright lint`` does.

Before, the plugin printed a note on stderr, linted nothing and flake8 exited 0: CI stayed green. Now
the run stops with flake8's "critical error" exit status 1 and one message naming the setting, in one
process and with ``-j 2`` (the worker's error is re-raised in the parent), and never a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import TRAINER_HEAD

SOURCE = TRAINER_HEAD + "    def _save_checkpoint(self, model, trial):\n        pass\n"
MESSAGE = "is outside the catalogue"


def flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TW", *args, "."],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for i in range(30):  # enough files for flake8 to start its process pool with -j 2
        (root / f"train_{i}.py").write_text(SOURCE, encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"setup.cfg": "[flake8]\ntw-transformers-version = 9.9.9\n"}, "--tw-transformers-version"),
        ({"pyproject.toml": '[tool.trainwright]\ntransformers-version = "9.9.9"\n'}, "[tool.trainwright]"),
    ],
    ids=["flake8-option", "pyproject"],
)
def test_an_unusable_target_fails_the_run_once(
    tmp_path: Path, files: dict[str, str], named: str, jobs: str
) -> None:
    result = flake8(project(tmp_path, files), "-j", jobs)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert output.count(MESSAGE) == 1, output
    assert "transformers 9.9.9" in output and named in output and "no file was linted" in output
    assert "Traceback" not in output and "TW101" not in output


def test_the_same_project_with_a_usable_target_reports_findings(tmp_path: Path) -> None:
    """The control: the failure above is the target's, not the project's."""
    result = flake8(
        project(tmp_path, {"setup.cfg": "[flake8]\ntw-transformers-version = 4.45.2\n"}), "-j", "1"
    )
    assert result.returncode == 1
    assert result.stdout.count(": TW101 ") == 30 and MESSAGE not in result.stdout + result.stderr


def test_the_cli_agrees(tmp_path: Path) -> None:
    root = project(tmp_path, {"pyproject.toml": '[tool.trainwright]\ntransformers-version = "9.9.9"\n'})
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "."],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert result.returncode == 2 and MESSAGE in result.stderr and result.stdout == ""


def test_a_bad_option_fails_before_any_file_is_read(tmp_path: Path) -> None:
    """The option is checked in flake8's main process (``parse_options``): a run over files with no
    Trainer code at all, which no worker would have resolved a target for, fails the same way."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "util.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    result = flake8(root, "--tw-transformers-version", "9.9.9", "-j", "2")
    output = result.stdout + result.stderr
    assert result.returncode == 1 and output.count(MESSAGE) == 1, output
    assert "--tw-transformers-version" in output and "Traceback" not in output
    assert flake8(root, "--tw-transformers-version", "4.46.3").returncode == 0
