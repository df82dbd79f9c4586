"""Apply libcst edits to the part of a file they touch, not to the whole file.

libcst parses a whole module into a concrete tree and, for the line-based edits, resolves a position
for every node: on a file with a 100,000-element list literal that took 26 s and 646 MB to change one
method signature. Here each edit gets the smallest *segment* that can be parsed on its own: the
innermost ``def``/``class`` statement containing the edit's line, with its indentation removed from
every line (and put back afterwards), or, when that cannot be done exactly, the top-level statement
(with any statement sharing a line through ``;``). Only that segment goes through libcst, with line
numbers offset; the result is spliced back between the untouched bytes around it. The caller verifies
the whole new file with ``ast.parse``, which is cheap next to libcst.

Why a segment parses alone and splices back safely: it starts at the first line of a statement and
ends at the last line of the same statement, so no bracket, string or continuation crosses its edges,
and the tokenizer's indentation stack is at that statement's level on both sides. A dedent is only
used when it round-trips exactly: every line of the segment either is empty or starts with the
statement's indentation followed by something else; otherwise (a string literal or a bracketed line
sitting further left, a whitespace-only line that would come back empty) the top-level statement is
used instead, which needs no dedent.

Inside the segment, runs of the scope's own statements that hold no edit (and do not mention
``super``, which a signature fix forwards to) are *holes*: each run is replaced by one ``pass`` line
with a marker before libcst sees the segment, and put back verbatim afterwards. A method of 10,000
``if`` blocks or a 100,000-key dict literal then costs libcst a few lines, not the whole body (fix
used to take 20 times the lint time there). Edit lines are shifted by the lines the holes removed.

Lines are counted the way Python counts them (``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line; form
feeds and Unicode line separators do not), so ``ast`` line numbers index them directly. The segment's
final line ending is cut off before libcst sees it and put back afterwards: libcst's native parser
drops a final lone ``\\r``, which is how CR-only files used to lose their last newline.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from trainwright_lint.edits import Edit
from trainwright_lint.syntax import nested_statements

NEWLINE = re.compile(r"\r\n?|\n")
FINAL_NEWLINE = re.compile(r"(?:\r\n|\r|\n)\Z")
Applier = Callable[[cst.Module, Sequence[Edit]], cst.Module]
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class SegmentError(Exception):
    """The file (or the part of it to edit) cannot be decoded, parsed or re-encoded exactly."""


@dataclass(frozen=True)
class SourceText:
    """A source file decoded the way Python reads it (PEP 263 coding line or UTF-8 BOM honoured)."""

    encoding: str  # codec that turns ``text`` back into the original bytes ("utf-8-sig" keeps a BOM)
    text: str
    newline: str  # the first line ending, for the lines libcst writes itself

    def encode(self, text: str) -> bytes:
        try:
            return text.encode(self.encoding)
        except UnicodeError as exc:  # some codecs (idna) raise a bare UnicodeError, without ``reason``
            reason = exc.reason if isinstance(exc, UnicodeEncodeError) else str(exc)
            raise SegmentError(f"the fixed text cannot be written as {self.encoding} ({reason})") from None


def decode(data: bytes) -> SourceText:
    """Decode ``data`` like the interpreter; refuse bytes that would not re-encode to themselves."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeError) as exc:
        raise SegmentError(f"cannot decode ({exc.__class__.__name__})") from None
    try:
        exact = text.encode(encoding) == data
    except UnicodeError:
        exact = False
    if not exact:
        raise SegmentError(f"does not round-trip through {encoding}")
    match = NEWLINE.search(text)
    return SourceText(encoding=encoding, text=text, newline=match.group(0) if match else "\n")


def parse_tree(text: str, path: str) -> ast.Module:
    """``ast.parse`` with every way it can refuse a text turned into ``SegmentError``."""
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise SegmentError(f"cannot parse ({exc.__class__.__name__})") from None


@dataclass(frozen=True)
class Segment:
    """Lines ``first``..``last`` (1-based, inclusive), given to libcst without ``indent``; ``scope``
    is the ``def``/``class`` statement it spans (None for a top-level segment)."""

    first: int
    last: int
    indent: str = ""
    scope: ast.stmt | None = None


HOLE_MIN_LINES = 20  # shorter runs are left to libcst: nothing to gain
HOLE_MARKER = "trainwright-fix-hole-"


class _Lines:
    """Offsets of the line starts of a text, counted like Python counts lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in NEWLINE.finditer(text))]

    def span(self, first: int, last: int) -> tuple[int, int]:
        end = self.starts[last] if last < len(self.starts) else len(self.text)
        return self.starts[first - 1], end

    def line(self, number: int) -> str:
        start, end = self.span(number, number)
        return self.text[start:end].rstrip("\r\n")


def _start(stmt: ast.stmt) -> int:
    decorators: Sequence[ast.expr] = getattr(stmt, "decorator_list", ())
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _end(stmt: ast.stmt) -> int:
    return stmt.end_lineno if stmt.end_lineno is not None else stmt.lineno


def _containing(body: Sequence[ast.stmt], line: int) -> int | None:
    for i, stmt in enumerate(body):
        if _start(stmt) <= line <= _end(stmt):
            return i
        if _start(stmt) > line:
            return None
    return None


def _top_level(body: Sequence[ast.stmt], index: int) -> Segment:
    """The top-level statement ``body[index]`` and any statement sharing one of its lines (``;``)."""
    lo = hi = index
    while lo > 0 and _end(body[lo - 1]) >= _start(body[lo]):
        lo -= 1
    while hi + 1 < len(body) and _start(body[hi + 1]) <= _end(body[hi]):
        hi += 1
    return Segment(_start(body[lo]), _end(body[hi]))


def _dedentable(lines: _Lines, first: int, last: int, indent: str) -> bool:
    """Whether removing ``indent`` from lines ``first``..``last`` and adding it back to every non-empty
    line gives the same text: each line is empty or is ``indent`` plus something."""
    for number in range(first, last + 1):
        line = lines.line(number)
        if line and not (line.startswith(indent) and len(line) > len(indent)):
            return False
    return True


def segment_for(tree: ast.Module, lines: _Lines, line: int) -> Segment:
    """The smallest segment holding line ``line`` that libcst can parse alone (see the module doc)."""
    index = _containing(tree.body, line)
    if index is None:
        raise SegmentError(f"line {line} is in no statement")
    chain = [tree.body[index]]
    while True:
        inner = nested_statements(chain[-1])
        i = _containing(inner, line)
        if i is None:
            break
        chain.append(inner[i])
    for stmt in reversed(chain[1:]):  # innermost scope first; the top level is the fallback below
        if not isinstance(stmt, SCOPES):
            continue
        first, last = _start(stmt), _end(stmt)
        indent = lines.line(first)[: stmt.col_offset]  # ASCII whitespace: bytes == characters
        if indent and indent.strip(" \t") == "" and _dedentable(lines, first, last, indent):
            return Segment(first, last, indent, stmt)
    return _top_level(tree.body, index)


def _merge(segments: Iterable[Segment]) -> list[Segment] | None:
    """Drop segments inside another one; None if two overlap without nesting (cannot happen for
    statements, but then the caller falls back to top-level segments)."""
    out: list[Segment] = []
    for seg in sorted(set(segments), key=lambda s: (s.first, -s.last)):
        if out and seg.first <= out[-1].last:
            if seg.last <= out[-1].last:
                continue
            return None
        out.append(seg)
    return out


def holes(seg: Segment, code_lines: Sequence[str], edit_lines: Iterable[int]) -> list[tuple[int, int]]:
    """Runs (first, last line, 1-based in the file) of the segment scope's own statements that hold
    no edit line, do not mention ``super`` and share no line with another statement, each run at
    least ``HOLE_MIN_LINES`` long. ``code_lines`` are the segment's lines."""
    scope = seg.scope
    if scope is None or not getattr(scope, "body", None):
        return []
    body: list[ast.stmt] = scope.body  # type: ignore[attr-defined]
    wanted = set(edit_lines)
    out: list[tuple[int, int]] = []
    run: list[int] = []  # [first, last] of the run being built

    def close() -> None:
        if run and run[1] - run[0] + 1 >= HOLE_MIN_LINES:
            out.append((run[0], run[1]))
        run.clear()

    for i, stmt in enumerate(body):
        first, last = _start(stmt), _end(stmt)
        alone = first > (_end(body[i - 1]) if i else scope.lineno) and (
            i + 1 == len(body) or last < _start(body[i + 1])
        )
        text = "".join(code_lines[first - seg.first : last - seg.first + 1])
        if not alone or "super" in text or HOLE_MARKER in text or any(first <= n <= last for n in wanted):
            close()
        elif run:
            run[1] = last
        else:
            run.extend((first, last))
    close()
    return out


def _rewrite_one(code: str, seg: Segment, edits: Sequence[Edit], apply: Applier, newline: str) -> str:
    ending = FINAL_NEWLINE.search(code)
    tail = ending.group(0) if ending is not None else ""
    body = code[: len(code) - len(tail)]
    if seg.indent:
        n = len(seg.indent)
        body = "".join(line[n:] if line.strip("\r\n") else line for line in _keep_ends(body))
    lines = _keep_ends(body)
    gaps = holes(seg, lines, (e.line for e in edits))
    kept: dict[str, str] = {}  # a hole's placeholder line -> the lines it stands for
    if gaps:
        pieces, done = [], 0
        for k, (first, last) in enumerate(gaps):
            a, b = first - seg.first, last - seg.first
            original = "".join(lines[a : b + 1])
            end = FINAL_NEWLINE.search(lines[b])
            indent = lines[a][: len(lines[a]) - len(lines[a].lstrip(" \t"))]
            placeholder = f"{indent}pass  # {HOLE_MARKER}{k}" + (end.group(0) if end else "")
            kept[placeholder] = original
            pieces += [*lines[done:a], placeholder]
            done = b + 1
        body = "".join([*pieces, *lines[done:]])
    try:
        module = cst.parse_module(body, config=cst.PartialParserConfig(default_newline=newline))
        shifted = [
            replace(
                e, line=e.line - seg.first + 1 - sum(last - first for first, last in gaps if last < e.line)
            )  # type: ignore[type-var]
            for e in edits
        ]
        new = apply(module, shifted).code
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError) as exc:
        raise SegmentError(f"cannot parse ({exc.__class__.__name__})") from None
    if new == body:
        return code
    if kept:
        restored = [kept.get(line, line) for line in _keep_ends(new)]
        if sum(1 for line in _keep_ends(new) if line in kept) != len(kept):
            raise SegmentError("a fix changed code it was not meant to touch")
        new = "".join(restored)
    if seg.indent:
        new = "".join(seg.indent + line if line.strip("\r\n") else line for line in _keep_ends(new))
    return new + tail


def _keep_ends(text: str) -> list[str]:
    """``text`` split after each line ending (Python's three), endings kept."""
    out, start = [], 0
    for m in NEWLINE.finditer(text):
        out.append(text[start : m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def rewrite(text: str, tree: ast.Module, edits: Sequence[Edit], apply: Applier, newline: str) -> str:
    """``text`` with ``edits`` applied by ``apply`` (``fixes.apply_edits``) segment by segment.

    ``tree`` is ``ast.parse(text)``; every edit's ``line`` is a line of ``text``. Raises
    ``SegmentError`` when a segment does not parse with libcst."""
    lines = _Lines(text)
    chosen = {id(e): segment_for(tree, lines, e.line) for e in edits}
    segments = _merge(chosen.values())
    if segments is None:  # pragma: no cover - statements nest; kept as a safe fallback
        chosen = {id(e): _top_level(tree.body, _containing(tree.body, e.line) or 0) for e in edits}
        segments = _merge(chosen.values()) or []
    pieces: list[str] = []
    done = 0
    for seg in segments:
        start, end = lines.span(seg.first, seg.last)
        mine = [e for e in edits if seg.first <= e.line <= seg.last]
        pieces += [text[done:start], _rewrite_one(text[start:end], seg, mine, apply, newline)]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
