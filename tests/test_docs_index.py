"""docs/index.md's example is what the tool does, so it cannot drift (issue 35: it once promised a TW201
and a suggested callback where the tool reported TW301 and TW303 and "0 callback suggestions").

The "before" block is linted in a project declaring the range the page names; the codes the tool
reports on each line must be exactly those the line's ``# TWxxx`` comment names. ``trainwright fix``
must turn it into the "fixed" block, byte for byte, and ``fix --suggest`` on that must print the
"suggested" block (the diff of the TW201 move)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
RANGE = "transformers>=4.46,<5.1"
NOTE = re.compile(r"  # (TW\d{3})\b.*$")


def block(name: str, language: str = "python") -> str:
    return PAGE.split(f"<!-- example: {name} -->\n```{language}\n", 1)[1].split("```", 1)[0]


def annotated(code: str) -> tuple[str, dict[int, set[str]]]:
    """The code without its ``# TWxxx`` notes, and the codes each line's note names."""
    lines, expected = [], {}
    for n, line in enumerate(code.splitlines(), 1):
        match = NOTE.search(line)
        if match:
            expected[n] = {match.group(1)}
            line = line[: match.start()]
        lines.append(line)
    return "\n".join(lines) + "\n", expected


def cli(page_example_project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwright_lint", *args, "-j", "1", "train.py"],
        cwd=page_example_project,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def page_example_project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\nversion = "0"\ndependencies = ["{RANGE}"]\n'
    )
    (tmp_path / "train.py").write_text(annotated(block("before"))[0])
    return tmp_path


def test_the_findings_are_those_the_page_names(page_example_project: Path) -> None:
    result = cli(page_example_project, "lint", "--output-format", "concise")
    assert result.returncode == 1, result.stderr
    found: dict[int, set[str]] = {}
    for line in result.stdout.splitlines():
        row, code = int(line.split(":")[1]), line.split(" ")[1]
        found.setdefault(row, set()).add(code)
    assert found == annotated(block("before"))[1]
    checked = PAGE.split("`trainwright lint` ends with `", 1)[1].split("`", 1)[0]
    assert checked in result.stderr


def test_fix_writes_the_fixed_block_and_suggest_prints_the_callback(page_example_project: Path) -> None:
    assert cli(page_example_project, "fix").returncode == 1  # the TW201 is left for a person (fix --suggest)
    assert (page_example_project / "train.py").read_text() == block("fixed")
    suggested = cli(page_example_project, "fix", "--suggest")
    assert "1 callback move previewed" in suggested.stderr
    printed = suggested.stdout[suggested.stdout.index("--- a/train.py") :]  # the diff, after the finding
    assert printed.strip("\n") == block("suggested", "diff").strip("\n")
    assert (page_example_project / "train.py").read_text() == block("fixed")  # nothing written
