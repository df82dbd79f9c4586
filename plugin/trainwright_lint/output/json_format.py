"""JSON: an array of finding records in ruff's shape (``ruff check --output-format json``), so that
tools written for ruff's output read ours unchanged; schema: ``docs/lint-json.schema.json``.

Ruff's fields: ``cell`` (always ``null``: no notebooks), ``code``, ``end_location``, ``filename`` (as
the linter holds it: relative to the project root; control characters JSON-escaped, the undecodable
bytes of a name written ``\\xff``, since strict JSON readers refuse a lone surrogate), ``fix`` (``null`` or ``{"applicability",
"edits", "message"}``, see :mod:`.fix_record`), ``location`` (``{"column", "row"}``, 1-based, columns
in characters; ``end_location`` exclusive), ``message``, ``name``, ``noqa_row`` (the line a
``# noqa`` comment silences it on), ``severity`` and ``url`` (the rule's page). Ours, after them:
``class`` and ``method`` (the class and method the finding is about, or ``null``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from trainwright_lint.finding import Finding
from trainwright_lint.output.fix_record import fix_record
from trainwright_lint.output.rule_meta import rule_url, severity
from trainwright_lint.terminal import encodable


def noqa_row(f: Finding) -> int:
    """The finding's own line when a ``# noqa`` there silences it (always, for today's rules), else
    the first line of its logical line (flake8 reads a comment anywhere on a multi-line header)."""
    first, last = f.noqa_lines if f.noqa_lines != (0, 0) else (f.line, f.line)
    return f.line if first <= f.line <= last else first


def record(f: Finding) -> dict[str, Any]:
    return {
        "cell": None,
        "code": f.code,
        "end_location": {"column": f.end_column, "row": f.end_line},
        "filename": encodable(f.path),
        "fix": fix_record(f.fix),
        "location": {"column": f.column, "row": f.line},
        "message": encodable(f.message),
        "name": f.name,
        "noqa_row": noqa_row(f),
        "severity": severity(f.code),
        "url": rule_url(f.code),
        "class": f.class_name,
        "method": f.method,
    }


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    json.dump([record(f) for f in findings], stream, indent=2)
    stream.write("\n")
