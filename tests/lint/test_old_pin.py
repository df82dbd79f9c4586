"""A project pinned below the catalogue (``transformers==4.18.0``) is still linted (issue 20).

It used to exit 2 with nothing linted. Now the rules that hold on every release (TW101, TW2xx, TW4xx)
run against the oldest catalogued release, with one warning naming the pin; the release-dependent ones
(``configuration.target.release_dependent``) are off, since they would judge the code against a Trainer
the project does not run. A version typed for the linter itself stays an error (exit 2).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trainwright_lint.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "old_pin" / "train.py"


def _project(root: Path, requirement: str) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "old"\nversion = "0"\ndependencies = ["transformers{requirement}"]\n'
    )
    shutil.copyfile(FIXTURE, root / "train.py")
    return root


@pytest.mark.parametrize("requirement", ["==4.18.0", "<4.30"])
def test_release_independent_rules_run_with_one_warning_naming_the_pin(
    requirement: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path / "old", requirement)
    status = main(["lint", "--output-format", "json", "-j", "1", str(root)])
    out, err = capsys.readouterr()
    assert status == 1, err
    codes = sorted(f["code"] for f in json.loads(out))
    assert codes == ["TW101", "TW201", "TW401"], codes
    warnings = [line for line in err.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and f"transformers {requirement} (pyproject.toml)" in warnings[0], err
    assert "older than the catalogue" in warnings[0] and "TW302" in warnings[0]


def test_the_release_dependent_rule_is_what_was_switched_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same file at the oldest catalogued release, asked for by name, gets the TW302 too."""
    root = _project(tmp_path / "old", "==4.18.0")
    main(["lint", "--output-format", "json", "-j", "1", "--transformers-version", "4.36.0", str(root)])
    codes = sorted(f["code"] for f in json.loads(capsys.readouterr().out))
    assert codes == ["TW101", "TW201", "TW302", "TW401"], codes


def test_a_version_typed_for_the_linter_below_the_catalogue_is_still_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path / "old", "==4.18.0")
    status = main(["lint", "-j", "1", "--transformers-version", "4.18.0", str(root)])
    assert status == 2
    assert "is outside the catalogue" in capsys.readouterr().err


def test_flake8_lints_the_old_pin_too(tmp_path: Path) -> None:
    root = _project(tmp_path / "old", "==4.18.0")
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TW", "train.py"],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
    )
    codes = sorted(line.split()[1] for line in done.stdout.splitlines())
    assert done.returncode == 1 and codes == ["TW101", "TW201", "TW401"], done.stdout + done.stderr
