"""flake8-compatible text: ``path:line:column: CODE message``, one finding per line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from trainwright_lint.finding import Finding


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    stream.writelines(f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}\n" for f in findings)
