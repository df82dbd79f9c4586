"""The resolved target through the real front ends: ``trainwright lint``/``fix`` summary lines and
stderr warnings, exit status 2 out of the catalogue, and the flake8 plugin reading the same pin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import VERSION_SENSITIVE_TRAINER as TRAINER
from trainwright_lint.cli import main

import trainwright.catalog

FINDING = re.compile(r"^\S+:\d+:\d+: TW\d{3}\b")


@pytest.fixture
def unpinned_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "train.py").write_text(TRAINER)
    monkeypatch.chdir(root)
    monkeypatch.setattr(trainwright.catalog, "installed_version", lambda dist="transformers": None)
    return root


def lint(
    args: list[str], capsys: pytest.CaptureFixture[str], command: str = "lint"
) -> tuple[int, list[str], str]:
    status = main([command, "-j", "1", *args])
    out, err = capsys.readouterr()
    return status, [" ".join(line.split(" ")[:2]) for line in out.splitlines() if FINDING.match(line)], err


def test_summary_names_the_pin_and_findings_match_its_newest_release(
    unpinned_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (unpinned_project / "pyproject.toml").write_text(
        '[project]\nname = "d"\ndependencies = ["transformers>=4.44,<4.46"]\n'
    )
    status, findings, err = lint(["."], capsys)
    assert status == 1 and "warning" not in err
    assert (
        "1 finding in 1 file (1 with Trainer subclasses or callbacks)\n"
        "checked against transformers >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2\n" in err
    )
    assert findings == ["train.py:9:5: TW101"]
    assert lint(["--transformers-version", "4.45.2", "."], capsys)[1] == findings
    status, newest, err = lint(["--transformers-version", "5.24.0", "."], capsys)
    assert newest == ["train.py:5:5: TW301", "train.py:6:15: TW303", "train.py:9:5: TW101"]
    assert "checked against transformers 5.24.0 (--transformers-version)\n" in err


def test_fix_summary_names_the_target_too(unpinned_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (unpinned_project / "requirements.txt").write_text("transformers==4.45.2\n")
    _status, _, err = lint(["--diff", "."], capsys, command="fix")
    assert (
        "would fix 0 findings in 0 files; 1 left\nchecked against transformers ==4.45.2 (requirements.txt)\n"
        in err
    )


def test_uncatalogued_pin_warns_on_stderr_naming_the_release_used(
    unpinned_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (unpinned_project / "requirements.txt").write_text("transformers==4.46.2\n")
    _status, _, err = lint(["."], capsys)
    assert (
        "trainwright lint: warning: transformers ==4.46.2 (requirements.txt) is not a catalogued release; "
        "checking 4.46.1, the nearest catalogued release at or below it\n"
    ) in err
    assert "checked against transformers ==4.46.2 (requirements.txt) → 4.46.1\n" in err


def test_out_of_catalogue_pin(unpinned_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A project's own pin below the catalogue is linted by the release-independent rules (with one
    warning, tests/lint/test_old_pin.py); a version typed for the linter outside it is exit 2."""
    (unpinned_project / "setup.cfg").write_text("[options]\ninstall_requires =\n    transformers<4.30\n")
    status, findings, err = lint(["."], capsys)
    assert status != 2 and findings
    assert err.startswith(
        "trainwright lint: warning: transformers <4.30 (setup.cfg) is older than the catalogue (4.36.0–5.25.0)"
    )
    status, _, err = lint(["--transformers-version", "7.0", "."], capsys, command="fix")
    assert status == 2 and err.startswith("trainwright fix: error: transformers 7.0 (--transformers-version)")


def test_no_requirement_falls_back_to_newest_with_a_warning(
    unpinned_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _status, findings, err = lint(["."], capsys)
    assert "trainwright lint: warning: no version requirement on transformers found" in err
    assert "checked against transformers 5.25.0 (newest catalogued, no requirement found)\n" in err
    assert len(findings) == 3


def test_project_is_found_from_the_paths_not_the_working_directory(
    unpinned_project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (unpinned_project / "pyproject.toml").write_text(
        '[project]\nname = "d"\ndependencies = ["transformers~=4.45.0"]\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    _status, findings, err = lint([str(unpinned_project)], capsys)
    assert "transformers ~=4.45.0 (pyproject.toml) → 4.45.0–4.45.2" in err and len(findings) == 1


def test_summary_survives_a_stream_that_cannot_encode_the_arrow(unpinned_project: Path) -> None:
    (unpinned_project / "pyproject.toml").write_text(
        '[project]\nname = "d"\ndependencies = ["transformers>=4.44,<4.46"]\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", "."],
        capture_output=True,
        env=dict(os.environ, PYTHONIOENCODING="ascii"),
        cwd=unpinned_project,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert b"transformers >=4.44,<4.46 (pyproject.toml) -> 4.44.0-4.45.2" in result.stderr


def test_flake8_plugin_resolves_from_the_files_project(unpinned_project: Path) -> None:
    def flake8(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flake8", "--select", "TW", *args, "train.py"],
            capture_output=True,
            text=True,
            cwd=unpinned_project,
            check=False,
        )

    (unpinned_project / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "transformers"\nversion = "4.45.2"\n'
    )
    codes = [line.split(" ")[1] for line in flake8().stdout.splitlines()]
    assert codes == ["TW101"]
    codes = [line.split(" ")[1] for line in flake8("--tw-transformers-version", "5.24.0").stdout.splitlines()]
    assert codes == ["TW301", "TW303", "TW101"]
    (unpinned_project / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "transformers"\nversion = "4.46.2"\n'
    )
    result = flake8()
    assert (
        result.stderr.count("trainwright: warning: transformers 4.46.2 (uv.lock) is not a catalogued release")
        == 1
    )
    (unpinned_project / "uv.lock").write_text(
        'version = 1\n\n[[package]]\nname = "transformers"\nversion = "9.9.9"\n'
    )
    result = flake8()  # the run fails (tests/lint/test_flake8_unusable_target.py has the rest)
    assert result.returncode == 1
    assert result.stdout.count("trainwright: transformers 9.9.9 (uv.lock) is outside the catalogue") == 1
