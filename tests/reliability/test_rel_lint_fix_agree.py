"""Issue 38 item 11: every fix ``lint`` marks ``[*]`` is one ``fix`` applies.

``lint`` marked fixes that ``fix`` then refused ("cannot parse; left untouched"): a form feed inside
the indentation (libcst's tokenizer cannot read it), 140-199 nested brackets (libcst's visitors
recurse about six frames per level, past the interpreter's default limit), and a UTF-8 BOM with a
latin-1 coding line (which Python itself refuses: ``encoding problem: latin-1 with BOM``). Each case
runs the real CLI: ``lint`` first, then ``fix``; a ``[*]`` finding must be gone after ``fix``, and
``fix`` must report no file it could not fix.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TRAINER = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def log_size(self):\n{body}"
RETURN = "        return len(self.tokenizer)\n"

CASES: dict[str, bytes] = {
    "form feed before a method's indentation": TRAINER.format(body=RETURN)
    .replace("    def log_size", "\f    def log_size")
    .encode(),
    "form feed before a statement's indentation": TRAINER.format(body="\f" + RETURN).encode(),
    "form feed alone on a line (fixable)": TRAINER.format(body=RETURN)
    .replace("    def", "\f\n    def")
    .encode(),
    "BOM with a latin-1 coding line": b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n"
    + TRAINER.format(body=RETURN).encode(),
    "ascii coding line with non-ASCII bytes in a comment (found by the fuzz target)": b"# -*- coding: ascii -*-\n"
    + TRAINER.format(body=RETURN + "        # \xc2\xa3\n").encode("latin-1"),
    "BOM with a utf-8 coding line (fixable)": b"\xef\xbb\xbf# -*- coding: utf-8 -*-\n"
    + TRAINER.format(body=RETURN).encode(),
}
for depth in (140, 160, 199):
    CASES[f"{depth} nested lists"] = TRAINER.format(
        body=f"        x = {'[' * depth}{']' * depth}\n{RETURN}"
    ).encode()
    CASES[f"{depth} nested calls"] = TRAINER.format(
        body=f"        x = {'f(' * depth}{')' * depth}\n{RETURN}"
    ).encode()
    CASES[f"{depth} nested brackets around the fix"] = TRAINER.format(
        body=f"        return len({'[' * depth}self.tokenizer{']' * depth})\n"
    ).encode()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "trainwright_lint", *args, "--output-format", "concise", "."]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str, str, bytes]]:
    """All cases in one project (one lint, one fix): name -> (lint line, fix stderr, fix stdout, bytes)."""
    root = tmp_path_factory.mktemp("agree")
    (root / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["transformers==5.24.0"]\n')
    names = {f"case_{i:02d}.py": name for i, name in enumerate(sorted(CASES))}
    for file, name in names.items():
        (root / file).write_bytes(CASES[name])
    lint = _cli("lint", cwd=root)
    fix = _cli("fix", cwd=root)
    assert "Traceback" not in lint.stderr + fix.stderr, lint.stderr + fix.stderr
    out = {}
    for file, name in names.items():
        line = "\n".join(x for x in lint.stdout.splitlines() if x.startswith(file + ":"))
        errors = "\n".join(x for x in fix.stderr.splitlines() if f"/{file}:" in x or x.startswith(file))
        left = "\n".join(x for x in fix.stdout.splitlines() if x.startswith(file + ":"))
        out[name] = (line, errors, left, (root / file).read_bytes())
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fix_lint_marks_safe_is_applied_by_fix(outcomes: dict, name: str) -> None:
    line, errors, left, after = outcomes[name]
    assert line, "the case must give a finding"
    assert not errors, (line, errors)  # fix never refuses a file lint offered a fix for
    if "[*]" in line:
        assert b"self.processing_class" in after and b"self.tokenizer" not in after, (line, left)
        assert "TW303" not in left
    else:
        assert "TW303" in left or "TW000" in left  # reported, consistently, as not fixable
    if "fixable" in name or "nested" in name:
        assert "[*]" in line, line  # these files the fixer can handle: no fix withheld for nothing


def test_a_bom_with_another_coding_is_not_linted_as_python_cannot_run_it(outcomes: dict) -> None:
    line, _errors, _left, _after = outcomes["BOM with a latin-1 coding line"]
    assert "TW000" in line and "byte-order mark with a coding line naming another encoding" in line, line
