"""The default text output as a new user meets it: short headlines, ``help:``/``note:`` lines fitted to
``COLUMNS``, and ``--output-format concise`` (one line per finding, whole message) for tools, which
says exactly what the JSON says."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import ROOT, lint_snippet
from trainwright_lint.output.headline import HEADLINE_WIDTH, split_message
from trainwright_lint.rules import RULES

GALLERY = ROOT / "examples" / "gallery"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gallery's "before" files in a project pinned to a range, as a user's repository would be."""
    root = tmp_path_factory.mktemp("sample")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "sample"\nversion = "0"\ndependencies = ["transformers>=4.44,<4.46"]\n'
    )
    for path in GALLERY.glob("*_before.py"):
        shutil.copy(path, root / path.name)
    return root


def lint(root: Path, *args: str, columns: str | None = "80") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", *args, "."],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_at_80_columns_no_line_is_over_100(sample: Path) -> None:
    result = lint(sample)
    assert result.returncode == 1, result.stderr
    lines = (result.stdout + result.stderr).splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert sum(len(line) <= 80 for line in lines) >= 0.95 * len(lines)
    assert "checked against transformers >=4.44,<4.46 (pyproject.toml)" in result.stderr


def test_every_finding_is_a_headline_then_indented_lines(sample: Path) -> None:
    full = lint(sample, columns="200").stdout.splitlines()
    concise = lint(sample, "--output-format", "concise").stdout.splitlines()
    headlines = [line for line in full if not line.startswith(" ")]
    assert [h.split(" ", 2)[:2] for h in headlines] == [c.split(" ", 2)[:2] for c in concise]
    assert any(line.startswith("  help: ") for line in full) and any(
        line.startswith("  note: ") for line in full
    )


def test_concise_and_json_say_the_same(sample: Path) -> None:
    concise = lint(sample, "--output-format", "concise").stdout.splitlines()
    records = json.loads(lint(sample, "--output-format", "json").stdout)
    legacy = json.loads(lint(sample, "--format", "json").stdout)
    assert records == legacy
    assert [
        f"{r['filename']}:{r['location']['row']}:{r['location']['column']}: {r['code']}" for r in records
    ] == [line.split(" [*]")[0].split(" ", 2)[0] + " " + line.split(" ")[1] for line in concise]
    assert all(r["message"] in line for r, line in zip(records, concise))


def _headlines() -> list[str]:
    out = []
    for rule in RULES.values():
        for example in rule.INVALID:
            out += [
                split_message(f.message).headline
                for f in lint_snippet(inspect.cleandoc(example.code), example.version)
            ]
    for path in GALLERY.glob("*_before.py"):
        out += [split_message(f.message).headline for f in lint_snippet(path.read_text(encoding="utf-8"))]
        out += [
            split_message(f.message).headline
            for f in lint_snippet(path.read_text(encoding="utf-8"), ">=4.44,<4.46")
        ]
    return out


def test_headlines_are_short_sentences() -> None:
    """About 80 characters: a long identifier may push one past it, never far."""
    headlines = _headlines()
    assert len(headlines) >= 30
    assert max(len(h) for h in headlines) <= 100, max(headlines, key=len)
    assert sum(len(h) <= HEADLINE_WIDTH + 5 for h in headlines) >= 0.9 * len(headlines)
    assert all(h.count("`") % 2 == 0 and not h.endswith((";", ",")) for h in headlines)
