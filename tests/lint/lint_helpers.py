"""Helpers for the linter tests: lint a code snippet in memory."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

from trainwright_lint.config import LintConfig
from trainwright_lint.engine import lint_source
from trainwright_lint.finding import Finding

FIXTURES = Path(__file__).parent / "fixtures"


def lint_snippet(
    code: str,
    version: str | None = None,
    select: Sequence[str] = (),
    trainer_bases: Sequence[str] = (),
) -> list[Finding]:
    config = LintConfig(
        select=tuple(select), transformers_version=version, trainer_bases=tuple(trainer_bases)
    )
    return lint_source(textwrap.dedent(code).lstrip("\n"), "snippet.py", config)


def codes(findings: Sequence[Finding]) -> list[str]:
    return [f.code for f in findings]
