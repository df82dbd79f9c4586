"""Issue 38 items 7 and 12: file names that are not valid UTF-8, or that hold ANSI escapes, a
right-to-left override or a newline followed by a GitHub Actions command, in every output format.

The attack: such a name crashed ``--output-format sarif`` (nothing printed), reached the terminal raw
in ``full``/``concise``/``github`` (colours changed, text reversed), and in ``concise`` split a finding
over two lines, the second one starting ``::error`` as a workflow command would. Now every format
prints every finding on its own line(s), escapes what a terminal would obey, and exits 1 (findings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import ROOT

TRAINER = (ROOT / "examples" / "gallery" / "tokenizer_before.py").read_bytes()  # one TW303 finding
NAMES = {
    "undecodable": b"bad\xff.py",
    "ansi": b"esc\x1b[31mred\x1b]8;;https:x\x1b\\.py",
    "rtl": "invoice\u202eyp.py".encode(),  # shown as "invoiceyp.py" reversed: "invoice.py" lookalike
    "newline": b"nl\n::error file=ci.yml,line=1::pwned.py",
    "carriage": b"cr\r::warning::x.py",
}
FORMATS = ("full", "concise", "json", "sarif", "github")
RAW = (b"\x1b", "\u202e".encode(), b"\r")  # bytes a terminal or a log viewer would obey


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    for name in NAMES.values():
        with open(os.path.join(os.fsencode(root), name), "wb") as out:
            out.write(TRAINER)
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Bytes, not text: what reaches the terminal is checked byte by byte."""
    env = {**os.environ, "COLUMNS": "300", "PYTHONIOENCODING": "utf-8"}
    command = [sys.executable, "-m", "trainwright_lint", *args, "-j", "1", "."]
    return subprocess.run(command, cwd=root, capture_output=True, env=env, check=False)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_survives_and_escapes_hostile_names(hostile: Path, fmt: str) -> None:
    result = run(hostile, "lint", "--output-format", fmt)
    assert result.returncode == 1, result.stderr.decode(errors="replace")
    assert b"Traceback" not in result.stderr
    for raw in RAW:
        assert raw not in result.stdout and raw not in result.stderr, (fmt, raw)
    text = result.stdout.decode("utf-8")  # valid UTF-8 throughout
    if fmt in ("json", "sarif"):
        document = json.loads(text)
        found = document if fmt == "json" else document["runs"][0]["results"]
        assert len(found) == len(NAMES)
        return
    heads = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert len(heads) == len(NAMES), heads  # one finding, one line: no name splits it
    if fmt == "github":
        assert all(line.startswith("::warning file=") for line in heads)
    else:
        assert not any(line.startswith("::") for line in heads)
        assert all(" TW303 " in line for line in heads)


def test_names_are_shown_escaped_and_recognisable(hostile: Path) -> None:
    text = run(hostile, "lint", "--output-format", "concise").stdout.decode("utf-8")
    for shown in ("bad\\xff.py:", "esc\\x1b[31mred\\x1b]8;;https:x\\x1b\\.py:", "invoice\\u202eyp.py:"):
        assert any(line.startswith(shown) for line in text.splitlines()), shown
    assert any(line.startswith("nl\\n::error file=ci.yml,line=1::pwned.py:") for line in text.splitlines())


def test_sarif_uri_keeps_the_bytes_of_an_undecodable_name(hostile: Path) -> None:
    """The SARIF crash: ``quote`` could not encode the surrogate; the URI now percent-encodes the
    name's bytes, so a viewer can still open the file."""
    document = json.loads(run(hostile, "lint", "--output-format", "sarif").stdout)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in document["runs"][0]["results"]
    }
    assert "bad%FF.py" in uris
    assert "nl%0A%3A%3Aerror%20file%3Dci.yml%2Cline%3D1%3A%3Apwned.py" in uris


def test_json_escapes_an_undecodable_name_for_strict_readers(hostile: Path) -> None:
    text = run(hostile, "lint", "--output-format", "json").stdout.decode("utf-8")
    assert "\\udcff" not in text  # a lone surrogate, which strict JSON readers refuse
    names = {r["filename"] for r in json.loads(text)}
    assert "bad\\xff.py" in names and "nl\n::error file=ci.yml,line=1::pwned.py" in names


def test_fix_diff_and_summary_escape_names_too(hostile: Path) -> None:
    result = run(hostile, "fix", "--diff")
    assert result.returncode == 1 and b"Traceback" not in result.stderr
    for raw in RAW:
        assert raw not in result.stdout and raw not in result.stderr, raw
    heads = [line for line in result.stdout.decode("utf-8").splitlines() if line.startswith("--- a/")]
    assert len(heads) == len(NAMES)
