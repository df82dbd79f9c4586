"""What editors and scripts need from ``lint`` and ``fix`` (issue 35): ``--stdin-filename``, ``-q``,
colour on a terminal only (``NO_COLOR`` honoured), paths relative to the current folder, the summary's
count of files with Trainer subclasses or callbacks, and the summary after the last finding's line."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import ROOT, read_pty, run_cli

GALLERY = ROOT / "examples" / "gallery"
TOKENIZER = (GALLERY / "tokenizer_before.py").read_text()  # one TW303, with a safe fix
SCRIPT = "from transformers import Trainer\n\ntrainer = Trainer(model=None)\ntrainer.train()\n"


def cli(cwd: Path, *args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    return run_cli(cwd, *args, stdin=stdin, env={**base, "COLUMNS": "200", **env})


@pytest.fixture
def editor_project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "train.py").write_text(TOKENIZER)
    (tmp_path / "script.py").write_text(SCRIPT)  # uses Trainer, defines no subclass
    (tmp_path / "other.py").write_text("x = 1\n")
    return tmp_path


# ------------------------------------------------------------------------------------------------ stdin


def test_stdin_is_linted_as_the_named_file(editor_project: Path) -> None:
    edited = TOKENIZER.replace("self.tokenizer", "self.tokenizer if True else self.tokenizer")
    result = cli(
        editor_project, "lint", "--output-format", "concise", "--stdin-filename", "pkg/train.py", stdin=edited
    )
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(
        line.startswith("pkg/train.py:11:") for line in lines
    )  # the text, not the file
    clean = TOKENIZER.replace("self.tokenizer", "self.processing_class")
    assert cli(editor_project, "lint", "--stdin-filename", "pkg/train.py", stdin=clean).returncode == 0
    assert (editor_project / "pkg" / "train.py").read_text() == TOKENIZER  # nothing written


def test_stdin_honours_the_projects_settings(editor_project: Path) -> None:
    (editor_project / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\n\n[tool.trainwright]\nignore = ["TW303"]\n'
    )
    assert cli(editor_project, "lint", "--stdin-filename", "pkg/train.py", stdin=TOKENIZER).returncode == 0


def test_fix_with_stdin_prints_the_fixed_text(editor_project: Path) -> None:
    result = cli(editor_project, "fix", "--stdin-filename", "pkg/train.py", stdin=TOKENIZER)
    assert result.returncode == 0, result.stderr
    assert result.stdout == TOKENIZER.replace("(self.tokenizer.", "(self.processing_class.")
    assert (editor_project / "pkg" / "train.py").read_text() == TOKENIZER
    assert "fixed 1 finding; 0 left" in result.stderr


def test_fix_with_stdin_gives_back_a_text_it_cannot_fix(editor_project: Path) -> None:
    broken = TOKENIZER + "def f(:\n"
    result = cli(editor_project, "fix", "--stdin-filename", "pkg/train.py", stdin=broken)
    assert result.returncode == 2
    assert result.stdout == broken  # an editor replacing its buffer with stdout loses nothing
    assert "cannot parse" in result.stderr and "Traceback" not in result.stderr


def test_stdin_that_does_not_parse_is_one_tw000(editor_project: Path) -> None:
    broken = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def f(:\n"
    result = cli(
        editor_project, "lint", "--output-format", "concise", "--stdin-filename", "new.py", stdin=broken
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stdout.startswith("new.py:5:") and " TW000 " in result.stdout


# ------------------------------------------------------------------------------------------- -q, summary


def test_quiet_prints_findings_only(editor_project: Path) -> None:
    loud = cli(editor_project, "lint", "-j", "1", ".")
    quiet = cli(editor_project, "lint", "-j", "1", "-q", ".")
    assert loud.returncode == quiet.returncode == 1
    assert quiet.stdout == loud.stdout and "TW303" in quiet.stdout
    assert "finding" in loud.stderr and quiet.stderr == ""
    fixed = cli(editor_project, "fix", "-q", "--diff", ".")
    assert fixed.returncode == 1 and fixed.stderr == "" and "+++ b/pkg/train.py" in fixed.stdout


def test_summary_counts_files_with_subclasses_not_files_that_use_trainer(editor_project: Path) -> None:
    """The script calls ``Trainer(...)`` (and is linted for it) but holds no subclass: 1 file, not 2."""
    result = cli(editor_project, "lint", "-j", "1", ".")
    assert "1 finding in 3 files (1 with Trainer subclasses or callbacks)" in result.stderr


def test_summary_comes_after_the_last_line_of_findings(tmp_path: Path) -> None:
    """Several files, stdout and stderr on one pipe, block-buffered stdout (as in CI): the summary
    starts a line of its own after the last ``help:`` line (it used to land inside the findings)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    for n in range(4):
        for path in GALLERY.glob("*_before.py"):
            shutil.copy(path, tmp_path / f"{path.stem}_{n}.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", "."],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**env, "COLUMNS": "80"},
        check=False,
    )
    lines = result.stdout.splitlines()
    assert len(result.stdout) > 16_384  # more than a pipe's buffer: the interleaving is real
    summary = [i for i, line in enumerate(lines) if " findings in " in line]
    assert summary == [len(lines) - 2], lines[summary[0] - 2 : summary[0] + 2] if summary else lines[-3:]
    assert lines[-3].startswith("  ")  # the last finding's help/note line, ended by its own newline


# ------------------------------------------------------------------------------------------- paths, colour


def test_paths_are_relative_to_the_current_folder(editor_project: Path) -> None:
    inside = cli(editor_project / "pkg", "lint", "--output-format", "concise", "-j", "1", ".")
    assert inside.stdout.startswith("train.py:11:"), inside.stdout
    above = cli(editor_project, "lint", "--output-format", "concise", "-j", "1", "pkg")
    assert above.stdout.startswith("pkg/train.py:11:"), above.stdout
    elsewhere = cli(
        editor_project.parent, "lint", "--output-format", "concise", "-j", "1", str(editor_project / "pkg")
    )
    assert elsewhere.stdout.startswith(f"{editor_project.name}/pkg/train.py:11:"), elsewhere.stdout
    tools = cli(editor_project / "pkg", "lint", "--output-format", "json", "-j", "1", ".")
    assert '"filename": "pkg/train.py"' in tools.stdout  # JSON stays relative to the project root


def on_a_pty(cwd: Path, *args: str, **env: str) -> str:
    leader, follower = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainwright_lint", *args],
        cwd=cwd,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env={**base, "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8", **env},
    )
    os.close(follower)
    out = read_pty(leader)
    proc.wait(timeout=120)
    return out.decode("utf-8")


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_colour_on_a_terminal_and_never_with_no_color(editor_project: Path, fmt: str) -> None:
    coloured = on_a_pty(editor_project, "lint", "-j", "1", "--output-format", fmt, "pkg")
    assert "\x1b[1;31m" in coloured and "\x1b[1mpkg/train.py\x1b[0m:11:19: " in coloured
    assert "\x1b[" not in on_a_pty(
        editor_project, "lint", "-j", "1", "--output-format", fmt, "pkg", NO_COLOR="1"
    )
    piped = cli(editor_project, "lint", "-j", "1", "--output-format", fmt, "pkg", FORCE_COLOR="1")
    assert "\x1b" not in piped.stdout  # tools read a pipe: never escape codes
