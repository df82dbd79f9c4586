"""``# noqa`` handling for the CLI, with flake8's semantics.

flake8 does this itself in plugin mode; the CLI must agree with it: a bare ``# noqa`` silences every
code on the line, ``# noqa: TW101,TW2`` silences codes equal to or starting with a listed code, a
comment anywhere on a multi-line ``def`` header covers the header, and ``# flake8: noqa`` alone on a
line skips the file. The CLI also reports a ``TW`` code in a ``# noqa`` that silences nothing or names
no code (TW001, ruff's RUF100): :func:`unused_directives`.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence

from trainwright_lint.finding import Finding

# Equivalent to flake8's defaults.NOQA_INLINE_REGEX / NOQA_FILE.
_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_FILE = re.compile(r"\s*# flake8[:=]\s*noqa\s*$", re.IGNORECASE)
_FILE_MARKER = re.compile(r"# flake8[:=]", re.IGNORECASE)  # where a file-level comment can be
# The same two searches on the text's UTF-8 bytes with ASCII letters lowered (``folded``): a literal
# prefix the regex engine scans for quickly, where a case-insensitive pattern tests every character
# (on TRL's 73 linted files: 20 ms before, 7 ms now, most of it the encoding). Each finds a superset of what the ``str`` pattern
# finds: ``\s`` also takes any non-ASCII byte (Unicode spaces), and KELVIN SIGN, the only non-ASCII
# letter that ``re.IGNORECASE`` equates with one of these ("k"), is spelt out. Only a hit runs the
# exact test, so the answers are unchanged.
_FOLDED_FILE_MARKER = re.compile(rb"# fla(?:k|\xe2\x84\xaa)e8[:=]")
_FOLDED_LISTS_TW = re.compile(rb"noqa[\s\x1c-\x1f\x80-\xff]*:[^\r\n]*tw")
_folded_last: tuple[str, bytes] = ("", b"")


def folded(source: str) -> bytes:
    """``source`` as UTF-8 with ASCII letters lowered, for the folded searches above. The last text's
    is kept: a lint asks both searches of the same text, one after the other."""
    global _folded_last
    last = _folded_last  # one read: another thread may replace it meanwhile
    if last[0] is not source:
        last = _folded_last = (source, source.encode("utf-8", "surrogatepass").lower())
    return last[1]


def file_is_skipped(lines: Sequence[str], source: str | None = None) -> bool:
    """``# flake8: noqa`` alone on a line. With ``source`` (the same text) one case-insensitive scan
    finds each ``# flake8:`` / ``# flake8=`` and only its line is tested: testing every line of a large
    file, or every ``8:`` of a file full of slices, cost more than the rest of this check."""
    if source is None:
        return any(("8:" in line or "8=" in line) and _FILE.match(line) for line in lines)
    if _FOLDED_FILE_MARKER.search(folded(source)) is None:
        return False
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


# ---------------------------------------------------------------------------------------------------
# Unused and unknown codes in ``noqa: TW...`` comments (ruff's RUF100): CLI only, never under flake8, which
# judges its own directives.

UNUSED_NOQA = "TW001"
UNUSED_NOQA_NAME = "unused-noqa"
_MAYBE_LISTS_TW = re.compile(r"noqa\s*:[^\r\n]*TW", re.IGNORECASE)  # cheap: most files have none


def may_list_codes(source: str) -> bool:
    """Whether ``source`` may hold a ``# noqa: ...TW...`` comment (a cheap scan; most files have none):
    without one there is no TW001 to report."""
    return _FOLDED_LISTS_TW.search(folded(source)) is not None and _MAYBE_LISTS_TW.search(source) is not None


def _comments(source: str) -> list[tuple[int, int, str]]:
    """``(line, column, text)`` of every comment (1-based line, 0-based column in characters); none
    when the text does not tokenize (the caller has parsed it, so that is rare)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return [(t.start[0], t.start[1], t.string) for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return []


def _covers(f: Finding, line: int) -> bool:
    first, last = f.noqa_lines if f.noqa_lines != (0, 0) else (f.line, f.line)
    return first <= line <= max(last, first)


def _problem(
    code: str, line: int, found: Sequence[Finding], known: Sequence[str], enabled: Callable[[str], bool]
) -> str | None:
    """What is wrong with ``code`` listed in a ``# noqa`` on ``line``, or None."""
    matching = [k for k in known if k.startswith(code)]
    if not matching:
        return f"unknown code `{code}` in `# noqa`; remove it (no trainwright code starts with it)"
    if code.startswith(UNUSED_NOQA) or not any(enabled(k) for k in matching):
        return None  # not checked in this run: it may silence something another run reports
    if any(f.code.startswith(code) and _covers(f, line) for f in found):
        return None
    return f"unused `# noqa` code `{code}`: nothing it names is reported on this line; remove it"


def unused_directives(
    found: Sequence[Finding],
    source: str,
    path: str,
    known: Sequence[str],
    enabled: Callable[[str], bool],
) -> list[Finding]:
    """TW001 findings for each ``TW`` code of a ``# noqa: ...`` comment that silences nothing
    (``found``: the findings *before* ``filter_noqa``) or names no known code. Bare ``# noqa`` and
    other tools' codes (``E501``) are never judged; a code whose rules are all off in this run
    (``--select``) is not either."""
    if not may_list_codes(source):
        return []
    out: list[Finding] = []
    for line, column, text in _comments(source):
        match = _INLINE.search(text)
        if match is None or not match.group("codes"):
            continue
        for code in (c.upper() for c in re.split(r"[,\s]+", match.group("codes").strip()) if c):
            problem = code.startswith("TW") and _problem(code, line, found, known, enabled)
            if problem:
                start = column + match.start() + 1
                out.append(
                    Finding(
                        UNUSED_NOQA,
                        UNUSED_NOQA_NAME,
                        problem,
                        path,
                        line,
                        start,
                        line,
                        start + len(match.group(0)),
                    )
                )
    return out
