"""JSON: an array of finding objects (code, name, message, path, line, column, end_line, end_column,
class, method); positions are 1-based, ``end_column`` exclusive."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from trainwright_lint.finding import Finding


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    json.dump([f.as_dict() for f in findings], stream, indent=2)
    stream.write("\n")
