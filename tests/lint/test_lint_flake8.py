"""The flake8 front end, run as flake8 runs it: codes, lines and 1-based columns exactly, options from
the command line and the config file, and no crash on files it cannot handle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from trainwright_lint.cli import main
from trainwright_lint.flake8_plugin import TrainwrightChecker


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TW,E999", "--tw-transformers-version", "5.24.0", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def positions(output: str) -> list[str]:
    """``path:line:col: CODE`` -> ``line:col: CODE``."""
    return [" ".join(line.split(" ")[:2]).split(":", 1)[1] for line in output.splitlines() if line.strip()]


def test_codes_lines_and_columns_exactly(fixtures_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = flake8("flake8_cases.py", cwd=fixtures_dir)
    assert result.returncode == 1, result.stderr
    expected = (fixtures_dir / "flake8_cases.expected").read_text().split("\n")
    assert positions(result.stdout) == [e for e in expected if e]
    # The CLI reports the same findings at the same positions (noqa included).
    status = main(
        [
            "lint",
            "--transformers-version",
            "5.24.0",
            "-j",
            "1",
            "--output-format",
            "concise",
            str(fixtures_dir / "flake8_cases.py"),
        ]
    )
    out = capsys.readouterr().out
    assert status == 1 and positions(out) == positions(result.stdout)


def test_options_from_command_line_and_config(fixtures_dir: Path, tmp_path: Path) -> None:
    project = fixtures_dir / "project"
    # child.py's base lives in another file and the file never says "Trainer": flake8 needs the option.
    assert flake8("pkg/child.py", cwd=project).stdout == ""
    with_option = flake8("--tw-trainer-bases", "BaseRunner", "pkg/child.py", cwd=project)
    assert positions(with_option.stdout) == ["5:5: TW101", "5:5: TW301"]
    # A sibling base is read on demand when the file itself passes the pre-filter.
    assert positions(flake8("pkg/sub_trainer.py", cwd=project).stdout) == ["5:5: TW101"]
    # Options from a flake8 config file; the target version changes the verdict.
    (tmp_path / "t.py").write_text(
        "from transformers import Trainer\n\nclass T(Trainer):\n    def log(self, logs):\n        pass\n"
    )
    (tmp_path / ".flake8").write_text("[flake8]\ntw-transformers-version = 4.46.3\n")
    quiet = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TW", "t.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert quiet.stdout == ""
    (tmp_path / ".flake8").write_text("[flake8]\ntw-transformers-version = 4.47.0\n")
    loud = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TW", "t.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert positions(loud.stdout) == ["4:5: TW301"]


def test_unparsable_file_does_not_crash_flake8(fixtures_dir: Path) -> None:
    result = flake8("pkg/broken.py", "pkg/base.py", cwd=fixtures_dir / "project")
    assert "Traceback" not in result.stderr
    assert positions(result.stdout) == ["3:22: E999"]  # flake8 reports it; TW yields nothing


def test_checker_survives_real_trainer_sources() -> None:
    """The plugin must never raise: run it over TRL's trainer package as flake8 would."""
    trl = pytest.importorskip("trl")
    files = sorted((Path(trl.__file__).parent / "trainer").glob("*.py"))
    assert len(files) > 10
    total = 0
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        checker = TrainwrightChecker(ast.parse("".join(lines)), lines, str(path))
        results = list(checker.run())
        for line, col, text, _ in results:
            assert line >= 1 and col >= 0 and text[:2] == "TW"
        total += len(results)
    assert total > 0
