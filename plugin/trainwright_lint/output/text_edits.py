"""A fix as text edits in ruff's shape, for tools that apply fixes themselves (JSON ``fix.edits``, an
editor's code action).

Why text edits are computed from the fixer's output rather than by the rules: the rules' edit
descriptions (``trainwright_lint.edits``) say *what* to change and the libcst transforms find the node
by line and shape; only the fixer knows the exact characters it writes (comments kept, a signature
re-wrapped, two passes when a fix needs them). So the file is fixed in memory exactly as ``trainwright
fix`` fixes it, the difference between the two texts is cut into the smallest replacements, and each
replacement goes to the finding whose fix touches those lines. Applying every edit of a file's safe
fixes (``applicability == "safe"``) therefore gives, byte for byte, what ``trainwright fix`` writes;
adding the unsafe ones gives what ``--unsafe-fixes`` writes.

Positions are ruff's: ``{"row", "column"}``, 1-based, columns in characters of the decoded text (the
text Python reads: PEP 263 coding line or BOM honoured), lines ended by ``\\n``, ``\\r\\n`` or a lone
``\\r``; ``end_location`` is exclusive. Edits of one file never overlap.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trainwright_lint.finding import Finding
from trainwright_lint.fixes import FixError, Linter, apply_edits, fix_bytes, rule_of, segment, wanted
from trainwright_lint.output.fix_record import applicability, message


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from (``line``, ``column``) up to, not including, (``end_line``, ``end_column``)
    with ``content``; 1-based, columns in characters (``Finding``'s convention)."""

    content: str
    line: int
    column: int
    end_line: int
    end_column: int

    def as_ruff(self) -> dict[str, Any]:
        """ruff's JSON edit: ``content``, ``location`` and ``end_location`` (``{"column", "row"}``)."""
        return {
            "content": self.content,
            "end_location": {"column": self.end_column, "row": self.end_line},
            "location": {"column": self.column, "row": self.line},
        }


@dataclass(frozen=True)
class SpelledFix:
    """A finding's fix as the output formats report it once its text edits are known: what
    ``output.fix_record`` reads (``applicability``, ``message``, ``edits``)."""

    applicability: str
    message: str
    edits: tuple[TextEdit, ...]


class _Offsets:
    """Character offset <-> (row, column) in a text, lines counted as Python counts them."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in segment.NEWLINE.finditer(text)]

    def position(self, offset: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset) - 1
        return row + 1, offset - self.starts[row] + 1


@dataclass(frozen=True)
class _Hunk:
    """``old[start:end]`` becomes ``content``; ``rows`` the 1-based lines of ``old`` it touches."""

    start: int
    end: int
    content: str
    rows: tuple[int, int]


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line and its ending (Python's three)


def _lines(text: str) -> list[str]:
    return [m.group(0) for m in _LINE.finditer(text)]


def _trim(old: str, new: str) -> tuple[int, int, str]:
    """``(prefix, suffix, middle)``: the characters ``old`` and ``new`` share at both ends, never
    splitting a ``\\r\\n``, and what replaces the rest of ``old``."""
    limit = min(len(old), len(new))
    p = 0
    while p < limit and old[p] == new[p]:
        p += 1
    if 0 < p < len(old) and old[p - 1] == "\r" and old[p] == "\n":
        p -= 1
    s = 0
    while s < limit - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1
    if 0 < s < len(old) - p and old[len(old) - s - 1] == "\r" and old[len(old) - s] == "\n":
        s -= 1
    return p, s, new[p : len(new) - s]


def diff_hunks(old: str, new: str) -> list[_Hunk]:
    """The smallest replacements (line blocks, then trimmed to the characters that differ) that turn
    ``old`` into ``new``, in order, never overlapping."""
    a, b = _lines(old), _lines(new)
    offsets = [0]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    hunks: list[_Hunk] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before, after = "".join(a[i1:i2]), "".join(b[j1:j2])
        p, s, middle = _trim(before, after)
        start, end = offsets[i1] + p, offsets[i2] - s
        hunks.append(_Hunk(start, end, middle, (i1 + 1, max(i1 + 1, i2))))
    return hunks


def hunks_as_edits(old: str, hunks: Sequence[_Hunk]) -> tuple[TextEdit, ...]:
    where = _Offsets(old)
    out = []
    for h in hunks:
        (row, col), (end_row, end_col) = where.position(h.start), where.position(h.end)
        out.append(TextEdit(h.content, row, col, end_row, end_col))
    return tuple(out)


def _touched_rows(text: str, tree: Any, f: Finding, newline: str) -> set[int]:
    """The lines of ``text`` that ``f``'s fix alone, in one pass, changes (empty if it cannot run)."""
    try:
        alone = segment.rewrite(text, tree, [f.fix], apply_edits, newline)
    except Exception:  # noqa: BLE001 - only attribution is lost: the hunk goes to the nearest finding
        return set()
    rows: set[int] = set()
    for h in diff_hunks(text, alone):
        rows.update(range(h.rows[0], h.rows[1] + 1))
    return rows


def _owner(h: _Hunk, owners: Sequence[tuple[Finding, set[int]]]) -> Finding:
    """The finding a hunk belongs to: the one whose own fix touches most of its lines, else the
    nearest by line."""
    span = set(range(h.rows[0], h.rows[1] + 1))

    def score(item: tuple[Finding, set[int]]) -> tuple[int, int]:
        f, rows = item
        distance = (
            0
            if f.line <= h.rows[1] and h.rows[0] <= f.end_line
            else min(abs(f.line - h.rows[1]), abs(h.rows[0] - f.end_line))
        )
        return (-len(span & rows), distance)

    return min(owners, key=score)[0]


def _assign(
    text: str, hunks: Sequence[_Hunk], owners: Sequence[Finding], tree: Any, newline: str
) -> dict[int, list[_Hunk]]:
    touched = [(f, _touched_rows(text, tree, f, newline)) for f in owners]
    out: dict[int, list[_Hunk]] = {id(f): [] for f in owners}
    for h in hunks:
        out[id(_owner(h, touched))].append(h)
    return out


def file_text_edits(
    data: bytes, path: str, findings: Sequence[Finding], lint: Linter
) -> dict[int, tuple[TextEdit, ...]]:
    """``id(finding)`` -> its fix's text edits, for the findings of one file (``data``, its bytes)
    that carry a fix the fixer applies. Raises ``FixError`` when the file cannot be fixed."""
    try:
        source = segment.decode(data)
        tree = segment.parse_tree(source.text, path)
    except segment.SegmentError as exc:
        raise FixError(str(exc)) from None
    text = source.text
    safe = wanted(findings, unsafe=False)
    every = wanted(findings, unsafe=True)
    out: dict[int, tuple[TextEdit, ...]] = {}
    if not every:
        return out
    # ``findings`` come without the digest of the text they were linted from, and ``data`` is read
    # again: the fixer lints it afresh (``first=None``) rather than trust them on another text.
    safe_text = segment.decode(fix_bytes(data, path, lint).fixed).text
    safe_hunks = diff_hunks(text, safe_text)
    unsafe_hunks: list[_Hunk] = []
    if len(every) > len(safe):
        all_text = segment.decode(fix_bytes(data, path, lint, unsafe=True).fixed).text
        unsafe_hunks = [h for h in diff_hunks(text, all_text) if h not in safe_hunks]
    for group, hunks in ((safe, safe_hunks), ([f for f in every if f not in safe], unsafe_hunks)):
        if not group:
            continue
        for f_id, mine in _assign(text, hunks, group, tree, source.newline).items():
            out[f_id] = hunks_as_edits(text, mine)
    return out


def spell_fixes(
    findings: Sequence[Finding],
    read: Callable[[str], bytes],
    linter_for: Callable[[str], Linter],
) -> list[Finding]:
    """``findings`` with each fix the fixer applies replaced by a :class:`SpelledFix` carrying its text
    edits (JSON ``fix.edits``). ``read(path)`` gives a file's bytes and ``linter_for(path)`` the
    re-linter the fixer uses. A file that cannot be read or fixed keeps its findings as they were
    (their ``edits`` stay empty): the output never fails for the sake of an edit."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    spelled: dict[int, tuple[TextEdit, ...]] = {}
    for path, mine in by_path.items():
        if not any(rule_of(f.fix) is not None for f in mine):
            continue
        try:
            spelled.update(file_text_edits(read(path), path, mine, linter_for(path)))
        except Exception:  # noqa: BLE001, S112 - a fix that cannot be spelt leaves edits empty, not a crash
            continue
    return [
        replace(f, fix=SpelledFix(applicability(f.fix), message(f.fix), spelled[id(f)]))
        if id(f) in spelled
        else f
        for f in findings
    ]
