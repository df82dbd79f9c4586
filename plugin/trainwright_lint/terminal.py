"""Terminal layout for the decision CLI (``trainwright hooks`` and ``trainwright explain``): how wide,
whether to colour, how to wrap, and how to fit a table.

Why one module: both commands print prose, lists and tables that must fit the window they are read in
(a fixed 120 columns wrapped mid-word in tmux and 80-column terminals), and the rules for that are the
same everywhere:

- **Width**: ``COLUMNS`` if it is a positive integer; else the size of the terminal stdout is on
  (``os.get_terminal_size``, then ``shutil.get_terminal_size(fallback=(80, 24))``); else 80. A pipe or
  a file gets 80, so output that is pasted, diffed or tested does not depend on the window it was made
  in.
- **Colour**: ANSI colour only when stdout is a terminal whose ``TERM`` is not ``dumb``.
  ``NO_COLOR`` (set and non-empty, https://no-color.org) always turns it off; ``FORCE_COLOR`` (set,
  non-empty, not ``0``) turns it on for pipes too (CI logs that render colour). ``NO_COLOR`` wins.
- **Wrapping**: at spaces only (``textwrap`` with ``break_long_words`` and ``break_on_hyphens`` off):
  a token wider than the line (a URL, a long identifier) overflows rather than being cut, because a cut
  identifier can no longer be searched for or pasted. :data:`GLUE` (a no-break space) keeps several
  words on one line (``<- target``). Continuation lines of a bullet (``→ ``, ``- ``, ``* ``) or of a
  signature (``(self, ...``) hang under its text.
- **Layout first, colour last**: text is laid out plain and painted afterwards (:meth:`Terminal.paint`),
  so escape codes never count as columns.
"""

from __future__ import annotations

import codecs
import math
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TextIO

DEFAULT_WIDTH = 80
GLUE = "\xa0"  # textwrap does not break at U+00A0; turned back into a space after wrapping
# For the commands' --help (argparse epilog): the environment variables the layout honours.
ENVIRONMENT_HELP = (
    "Output fits the terminal: COLUMNS if set, else the terminal's width, else 80 (a pipe or a file). "
    "Colour only on a terminal; NO_COLOR=1 turns it off, FORCE_COLOR=1 turns it on for pipes too "
    "(NO_COLOR wins)."
)
STACK_INDENT = 4  # a table's last column, moved under its row when the row is too narrow for it
GAP = 2  # spaces between table columns

# SGR parameters by role, so that callers say what a span is, not which colour it gets.
STYLES: dict[str, str] = {
    "heading": "1",  # bold
    "warning": "1;31",  # bold red: an override that is ignored or breaks
    "mark": "36",  # cyan: "<- target" and similar pointers
    "advice": "33",  # yellow: a verdict arrow
    "path": "1",  # bold: where a finding is (ruff's colours, from here down)
    "code": "1;31",  # bold red: a finding's code
    "fixable": "36",  # cyan: "[*]", a fix `trainwright fix` applies
    "label": "1;36",  # bold cyan: "help:" and "note:"
}
_BULLETS = ("→ ", "-> ", "- ", "* ", "• ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _flag(environ: Mapping[str, str], name: str) -> bool:
    value = environ.get(name, "")
    return value != "" and value != "0"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


def detect_width(stream: TextIO, environ: Mapping[str, str]) -> int:
    """The width to lay out for: ``COLUMNS``, else the terminal's, else :data:`DEFAULT_WIDTH`."""
    columns = environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if not _isatty(stream):
        return DEFAULT_WIDTH
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        width = 0
    if width <= 0:  # a pseudo-terminal nobody sized (some CI runners report 0 columns)
        width = shutil.get_terminal_size(fallback=(DEFAULT_WIDTH, 24)).columns
    return width if width > 0 else DEFAULT_WIDTH


def width_is_known(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the width was asked for (``COLUMNS``) or can be measured (a terminal), rather than
    the default a pipe gets. Diagnostics on stderr are wrapped only then: in a pipe they stay one
    line each, for the tools and people that search them."""
    columns = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    return (columns.isdigit() and int(columns) > 0) or _isatty(stream)


def detect_colour(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Colour on a terminal; ``NO_COLOR`` off, ``FORCE_COLOR`` on even for a pipe (``NO_COLOR`` wins)."""
    if environ.get("NO_COLOR", "") != "":
        return False
    if _flag(environ, "FORCE_COLOR"):
        return True
    return _isatty(stream) and environ.get("TERM", "") != "dumb"


_SHOWN_ASCII = str.maketrans({"→": "->", "–": "-"})


def printable(text: str, stream: TextIO) -> str:
    """``text`` with ``→``/``–`` spelt ``->``/``-`` when ``stream`` cannot encode them (a Windows pipe
    in cp1252, say), and anything else it cannot encode (a non-ASCII name in a finding) as a
    backslash escape, so that output never raises ``UnicodeEncodeError``. A stream that names no
    encoding (``io.StringIO``) takes any text."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except LookupError:
        return text
    except UnicodeEncodeError:
        text = text.translate(_SHOWN_ASCII)
        return text.encode(encoding, "backslashreplace").decode(encoding)
    return text


# What must never reach a terminal or a log raw from a file name or a message: C0/C1 control characters
# (ANSI escapes, a newline that splits a finding and lets the next line pose as a CI command), the
# bidirectional overrides and isolates (U+061C, U+200E/F, U+202A-E, U+2066-9: "Trojan Source" names
# that read backwards), the Unicode line and paragraph separators, and lone surrogates (the bytes of a
# name that is not valid UTF-8, as ``os.fsdecode`` keeps them), which no encoder accepts.
_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name: shown as that byte
        return f"\\x{code - 0xDC00:02x}"
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown_safely(text: str) -> str:
    """``text`` with every character that could change what a terminal or a CI log shows (see
    ``_HIDDEN``) written as a Python-style escape (``\\x1b``, ``\\n``, ``\\u202e``; an undecodable
    byte of a name as ``\\xff``), so that a hostile file name is shown, never obeyed. Ordinary text,
    non-ASCII letters included, is unchanged."""
    return _HIDDEN.sub(_escape, text) if _HIDDEN.search(text) else text


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with only its lone surrogates (the undecodable bytes of a file name) escaped, as
    :func:`shown_safely` escapes them: for JSON, which escapes control characters itself but whose
    strict readers refuse a lone surrogate."""
    return _SURROGATE.sub(_escape, text) if _SURROGATE.search(text) else text


def _encodes(stream: TextIO, text: str) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        codecs.encode(text, encoding)
    except (UnicodeError, LookupError):
        return False
    return True


def hanging_indent(paragraph: str) -> int:
    """Columns that continuation lines of ``paragraph`` are indented by: under a bullet's text, or one
    column in from a signature's opening parenthesis; 0 for plain prose."""
    for bullet in _BULLETS:
        if paragraph.startswith(bullet):
            return len(bullet)
    return 1 if paragraph.startswith("(") else 0


@dataclass(frozen=True)
class Terminal:
    """Where the text goes: its width, whether it takes colour, whether it can print ``→``."""

    width: int = DEFAULT_WIDTH
    colour: bool = False
    unicode: bool = True

    @classmethod
    def detect(cls, stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> Terminal:
        stream = stream if stream is not None else sys.stdout
        environ = environ if environ is not None else os.environ
        return cls(
            width=detect_width(stream, environ),
            colour=detect_colour(stream, environ),
            unicode=_encodes(stream, "→←"),
        )

    @property
    def arrow(self) -> str:
        """The marker of an advice line; ``->`` where stdout cannot encode ``→`` (a C-locale pipe)."""
        return "→" if self.unicode else "->"

    # -------------------------------------------------------------------------------------- wrapping

    def wrap(
        self,
        text: str,
        indent: str = "",
        hang: int | None = None,
        width: int | None = None,
        lead: str | None = None,
    ) -> list[str]:
        """``text`` as lines of at most ``width`` (default: the terminal's) columns, broken at spaces only.

        The first line starts with ``lead`` (default: ``indent``); continuation lines with ``indent``
        plus ``hang`` spaces (default: :func:`hanging_indent` of the text).
        """
        width = self.width if width is None else width
        hang = hanging_indent(text) if hang is None else hang
        lines = textwrap.wrap(
            text,
            max(1, width),
            initial_indent=indent if lead is None else lead,
            subsequent_indent=indent + " " * hang,
            break_long_words=False,
            break_on_hyphens=False,
        )
        return [line.replace(GLUE, " ") for line in lines] or [indent.rstrip()]

    # --------------------------------------------------------------------------------------- colour

    def style(self, text: str, role: str) -> str:
        """``text`` in the colour of ``role`` (:data:`STYLES`), each line on its own (a pager or a
        multiplexer redrawing one line still shows it right); unchanged without colour."""
        if not self.colour:
            return text
        code = STYLES[role]
        return "\n".join(f"\x1b[{code}m{part}\x1b[0m" if part else part for part in text.split("\n"))

    def paint(self, text: str, spans: Sequence[tuple[str, str]]) -> str:
        """Colour each match of the ``(regex, role)`` pairs in laid-out ``text``; unchanged without
        colour. Patterns must not overlap (nor match text already styled)."""
        if not self.colour:
            return text
        for pattern, role in spans:
            text = re.sub(pattern, partial(self._style_match, role), text, flags=re.MULTILINE)
        return text

    def _style_match(self, role: str, match: re.Match[str]) -> str:
        return self.style(match[0], role)


# ------------------------------------------------------------------------------------------------- tables

Cell = str | Sequence[str]  # a string, or several paragraphs that each start on a new line


@dataclass(frozen=True)
class Column:
    """A table column.

    ``kind``: ``"fixed"`` never wraps (short values: a version, a count); ``"wrap"`` wraps at spaces and
    is never narrower than its longest word or ``min_width`` (prose below ~30 columns is unreadable);
    ``"spill"`` (first column only) keeps each cell whole and is sized for most of its cells: a longer
    cell takes a line of its own and the rest of the row starts under it, as ``argparse`` does with long
    option names.
    """

    header: str
    kind: str = "wrap"
    min_width: int = 0


def _paragraphs(cell: Cell) -> list[str]:
    return [cell] if isinstance(cell, str) else list(cell)


def _longest_word(text: str) -> int:
    """Columns the widest word of ``text`` needs, on a continuation line (under its hanging indent)."""
    return max((len(w) for w in text.split()), default=0) + hanging_indent(text)


def _floors(columns: Sequence[Column], cells: list[list[list[str]]], strict: bool) -> list[int]:
    """Narrowest width of each column; ``strict=False`` is the last resort (no readability minimum,
    spill columns down to their header)."""
    floors = []
    for i, col in enumerate(columns):
        paras = [p for row in cells for p in row[i]]
        natural = max((len(p) for p in paras), default=0)
        if col.kind == "fixed":
            floors.append(natural)
        elif col.kind == "spill":
            lengths = sorted(len(p) for p in paras)
            typical = lengths[math.ceil(0.8 * len(lengths)) - 1] if lengths else 0
            floors.append(max(len(col.header), typical) if strict else len(col.header))
        else:
            longest = max((_longest_word(p) for p in paras), default=0)
            floors.append(min(natural, max(longest, col.min_width)) if strict else longest)
    return floors


def _allocate(floors: list[int], naturals: list[int], avail: int) -> list[int]:
    """Widths between floor and natural summing to at most ``avail``: the space above the floors is
    shared in proportion to what each column would still use (its natural width minus its floor)."""
    slack = [max(0, n - f) for f, n in zip(floors, naturals)]
    spare = avail - sum(floors)
    if spare >= sum(slack):
        return [f + s for f, s in zip(floors, slack)]
    if spare <= 0:
        return list(floors)
    shares = [spare * s / sum(slack) for s in slack]
    widths = [f + int(sh) for f, sh in zip(floors, shares)]
    left = spare - sum(int(sh) for sh in shares)
    for i in sorted(range(len(shares)), key=lambda i: shares[i] - int(shares[i]), reverse=True)[:left]:
        widths[i] += 1
    return widths


def render_table(term: Terminal, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]) -> list[str]:
    """Lines of a plain-text table fitting ``term.width``.

    Tried in order: all columns side by side, shrunk towards their floors; then the last column moved
    under each row (indented by :data:`STACK_INDENT`, as wide as the terminal allows) with the others
    side by side; then side by side at the narrowest floors, overflowing only where one word is wider
    than its column.
    """
    assert all(c.kind != "spill" for c in columns[1:]), "only the first column can spill"
    cells = [[_paragraphs(c.header) for c in columns]] + [[_paragraphs(c) for c in row] for row in rows]
    naturals = [max(len(p) for row in cells for p in row[i]) for i in range(len(columns))]

    def avail(n: int) -> int:
        return term.width - GAP * (n - 1)

    floors = _floors(columns, cells, strict=True)
    if sum(floors) <= avail(len(columns)) or len(columns) == 1:
        return _side_by_side(term, columns, cells, _allocate(floors, naturals, avail(len(columns))))
    lead = len(columns) - 1
    if sum(floors[:lead]) <= avail(lead):
        widths = _allocate(floors[:lead], naturals[:lead], avail(lead))
        return _stacked(term, columns, cells, widths)
    loose = _floors(columns, cells, strict=False)
    return _side_by_side(term, columns, cells, _allocate(loose, naturals, avail(len(columns))))


def _wrap_cell(term: Terminal, paragraphs: list[str], width: int, indent: str = "") -> list[str]:
    lines: list[str] = []
    for para in paragraphs:
        lines += term.wrap(para, indent=indent, width=width + len(indent)) if para else [""]
    return lines or [""]


def _join(parts: Sequence[str], widths: Sequence[int]) -> str:
    return (" " * GAP).join(p.ljust(w) for p, w in zip(parts, widths)).rstrip()


def _row_lines(
    term: Terminal, columns: Sequence[Column], row: list[list[str]], widths: list[int]
) -> list[str]:
    lines: list[str] = []
    if columns[0].kind == "spill" and any(len(p) > widths[0] for p in row[0]):
        lines += row[0]  # whole, on lines of their own; the other cells start under them
        row = [[""], *row[1:]]
    wrapped = [
        row[i] if col.kind == "fixed" else _wrap_cell(term, row[i], widths[i])
        for i, col in enumerate(columns)
    ]
    for k in range(max(len(w) for w in wrapped)):
        lines.append(_join([w[k] if k < len(w) else "" for w in wrapped], widths))
    return lines


def _side_by_side(
    term: Terminal, columns: Sequence[Column], cells: list[list[list[str]]], widths: list[int]
) -> list[str]:
    lines = _row_lines(term, columns, cells[0], widths)
    lines.append((" " * GAP).join("-" * w for w in widths))
    for row in cells[1:]:
        lines += _row_lines(term, columns, row, widths)
    return lines


def _stacked(
    term: Terminal, columns: Sequence[Column], cells: list[list[list[str]]], widths: list[int]
) -> list[str]:
    lead = len(widths)
    indent = " " * STACK_INDENT
    below = max(1, term.width - STACK_INDENT)
    lines: list[str] = []
    for n, row in enumerate(cells):
        lines += _row_lines(term, columns[:lead], row[:lead], widths)
        lines += [line for line in _wrap_cell(term, row[lead], below, indent) if line.strip()]
        if n == 0:
            lines.append((" " * GAP).join("-" * w for w in widths))
    return lines


def visible(text: str) -> str:
    """``text`` without colour codes (what the reader sees; for measuring painted output)."""
    return ANSI.sub("", text)
