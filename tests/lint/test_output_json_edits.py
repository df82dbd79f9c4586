"""JSON ``fix.edits`` round-trip: applying them with a small applier written here (not the project's)
gives, byte for byte, what ``trainwright fix`` writes, for every fix in the gallery and in the fix
fixtures; adding the unsafe edits gives what ``fix --unsafe-fixes`` writes."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import subprocess
import tokenize
from pathlib import Path
from typing import Any

import pytest
from lint_helpers import FIXTURES, ROOT, run_cli

LINE_END = re.compile(r"\r\n|\r|\n")
TARGETS = {  # each set of files against the range its fixes were written for
    "gallery": ((ROOT / "examples" / "gallery").glob("*_before.py"), ">=4.44,<4.46"),
    "fixtures": ((FIXTURES / "fix").glob("*.before.py"), "5.24.0"),
}


def apply(data: bytes, edits: list[dict[str, Any]]) -> bytes:
    """An independent applier: decode as Python does, turn ruff's 1-based (row, column) into
    offsets, check that no two edits overlap, apply from the end, encode back."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    starts = [0] + [m.end() for m in LINE_END.finditer(text)]

    def offset(loc: dict[str, int]) -> int:
        return starts[loc["row"] - 1] + loc["column"] - 1

    spans = sorted((offset(e["location"]), offset(e["end_location"]), e["content"]) for e in edits)
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        assert end <= start, f"overlapping edits: {spans}"
    for start, end, content in reversed(spans):
        assert 0 <= start <= end <= len(text)
        text = text[:start] + content + text[end:]
    return text.encode(encoding)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(root, *args, env={**os.environ, "COLUMNS": "200"})


def project(tmp: Path, files: list[Path]) -> Path:
    tmp.mkdir()
    (tmp / "pyproject.toml").write_text('[project]\nname = "sample"\nversion = "0"\n')
    for f in files:
        shutil.copyfile(f, tmp / f.name)
    return tmp


@pytest.mark.parametrize("which", sorted(TARGETS))
def test_json_edits_give_the_bytes_fix_writes(tmp_path: Path, which: str) -> None:
    paths, version = TARGETS[which]
    files = sorted(paths)
    original = project(tmp_path / "original", files)
    records = json.loads(
        cli(
            original, "lint", "-j", "1", "--transformers-version", version, "--output-format", "json", "."
        ).stdout
    )
    by_file: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_file.setdefault(r["filename"], []).append(r)
    fixed: dict[bool, Path] = {}
    for unsafe in (False, True):
        fixed[unsafe] = project(tmp_path / f"fixed-{unsafe}", files)
        extra = ["--unsafe-fixes"] if unsafe else []
        cli(fixed[unsafe], "fix", "-j", "1", "--transformers-version", version, *extra, ".")
    fixable = 0
    for f in files:
        mine = [r["fix"] for r in by_file.get(f.name, []) if r["fix"] is not None]
        fixable += len(mine)
        for unsafe in (False, True):
            allowed = ("safe", "unsafe") if unsafe else ("safe",)
            edits = [e for fix in mine if fix["applicability"] in allowed for e in fix["edits"]]
            expected = (fixed[unsafe] / f.name).read_bytes()
            assert apply(f.read_bytes(), edits) == expected, (f.name, unsafe, edits)
        # Each fix says what it changes, unless another fix's edit replaces the finding's lines whole
        # (TW201's move deletes the override whose `super()` call TW302 would have rewritten).
        records = [r for r in by_file.get(f.name, []) if r["fix"] is not None]
        for r in records:
            if not r["fix"]["edits"]:
                others = [e for o in records if o is not r for e in o["fix"]["edits"]]
                assert any(_covers(e, r) for e in others), (f.name, r)
    assert fixable >= (4 if which == "gallery" else 9)


def test_the_applier_itself_can_fail() -> None:
    """A wrong edit gives other bytes, and overlapping edits are refused: the check can fail."""
    data = b"a = 1\r\nb = 2\n"
    edit = {"content": "x", "location": {"row": 2, "column": 1}, "end_location": {"row": 2, "column": 2}}
    assert apply(data, [edit]) == b"a = 1\r\nx = 2\n"
    with pytest.raises(AssertionError):
        apply(data, [edit, {**edit, "content": "y"} | {"end_location": {"row": 2, "column": 3}}])


def _covers(edit: dict[str, Any], record: dict[str, Any]) -> bool:
    """Whether ``edit`` replaces every line of ``record``'s finding."""
    start, end = edit["location"]["row"], edit["end_location"]["row"]
    return start <= record["location"]["row"] and record["end_location"]["row"] <= end
