"""Annotated fixture files, flake8-bugbear style: every line that must be reported ends with a
comment naming its codes (``# TW201``, ``# TW101 TW202``); every other line must not be reported.

The files sit in ``fixtures/rules/``, one per rule family, and mix flagged cases with the hard
negatives that a pattern matcher would get wrong. A ``# target: X`` header line sets the release.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source

RULE_FIXTURES = Path(__file__).parent / "fixtures" / "rules"
_EXPECTED = re.compile(r"#\s*((?:TW\d{3}\s*)+)$")
_TARGET = re.compile(r"^#\s*target:\s*(\S+)", re.MULTILINE)


def expected(source: str) -> set[tuple[int, str]]:
    out = set()
    for number, line in enumerate(source.splitlines(), 1):
        m = _EXPECTED.search(line)
        if m:
            out |= {(number, code) for code in m.group(1).split()}
    return out


@pytest.mark.parametrize("path", sorted(RULE_FIXTURES.glob("*.py")), ids=lambda p: p.stem)
def test_annotated_fixture(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    target = _TARGET.search(source)
    config = LintConfig(
        transformers_version=target.group(1) if target else "5.24.0", trl_version="1.16.0", preview=True
    )
    findings = lint_source(source, str(path), config)
    got = {(f.line, f.code) for f in findings}
    want = expected(source)
    assert got == want, {
        "missing": sorted(want - got),
        "unexpected": sorted((f.line, f.code, f.message) for f in findings if (f.line, f.code) not in want),
    }
    assert want, "a fixture must flag something"
