"""``# noqa`` handling for the CLI, with flake8's semantics.

flake8 does this itself in plugin mode; the CLI must agree with it: a bare ``# noqa`` silences every
code on the line, ``# noqa: TW101,TW2`` silences codes equal to or starting with a listed code, a
comment anywhere on a multi-line ``def`` header covers the header, and ``# flake8: noqa`` alone on a
line skips the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from trainwright_lint.finding import Finding

# Equivalent to flake8's defaults.NOQA_INLINE_REGEX / NOQA_FILE.
_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_FILE = re.compile(r"\s*# flake8[:=]\s*noqa\s*$", re.IGNORECASE)
_FILE_MARKER = re.compile(r"# flake8[:=]", re.IGNORECASE)  # where a file-level comment can be


def file_is_skipped(lines: Sequence[str], source: str | None = None) -> bool:
    """``# flake8: noqa`` alone on a line. With ``source`` (the same text) one case-insensitive scan
    finds each ``# flake8:`` / ``# flake8=`` and only its line is tested: testing every line of a large
    file, or every ``8:`` of a file full of slices, cost more than the rest of this check."""
    if source is None:
        return any(("8:" in line or "8=" in line) and _FILE.match(line) for line in lines)
    for found in _FILE_MARKER.finditer(source):
        at = found.start()
        start = max(source.rfind("\n", 0, at), source.rfind("\r", 0, at)) + 1
        ends = [e for e in (source.find("\n", at), source.find("\r", at)) if e != -1]
        if _FILE.match(source, start, min(ends) if ends else len(source)):
            return True
    return False


def _silences(line: str, code: str) -> bool:
    if "#" not in line:
        return False
    match = _INLINE.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(code.startswith(c.upper()) for c in re.split(r"[,\s]+", codes.strip()) if c)


def filter_noqa(findings: Iterable[Finding], lines: Sequence[str]) -> list[Finding]:
    """Drop findings silenced by a ``# noqa`` comment on one of their logical line's lines."""
    kept = []
    for f in findings:
        first, last = f.noqa_lines if f.noqa_lines != (0, 0) else (f.line, f.line)
        window = lines[max(first, 1) - 1 : max(last, first)]
        if not any(_silences(line, f.code) for line in window):
            kept.append(f)
    return kept
