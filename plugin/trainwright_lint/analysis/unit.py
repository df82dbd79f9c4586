"""One parsed file and the facts computed from it, once, on demand.

A ``FileUnit`` keeps the ``ast`` tree of a file next to its text and summary, so that every rule
reads the same nodes and every fact (a method's effects, the ``super()`` calls on some lines) is
computed once and shared. Facts are computed lazily and narrowed by the text: to find the
``super()`` calls of a 400-line ``__init__`` we search its text for ``super(`` and walk only the
statements on those lines. Reading every node of a trainer file would cost more than parsing it.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from itertools import accumulate, islice, repeat
from operator import add

from trainwright_lint import prefilter
from trainwright_lint.analysis.facts import CLASS_NODE, MATCH_LINES, NAMES_MATCHING, FactStore
from trainwright_lint.project.summary import ClassSummary, MethodSummary, ModuleSummary
from trainwright_lint.syntax import (
    FUNCTION_TYPES,
    STATEMENT_HOLDERS,
    FunctionNode,
    char_column,
    child_nodes,
    line_span,
    nested_statements,
)
from trainwright_lint.textscan import LiteralScan

_NEWLINE = re.compile(r"\r\n|\r|\n")
Scan = re.Pattern[str] | LiteralScan  # a LiteralScan is the faster kind (``textscan``)


class FileUnit:
    def __init__(self, path: str, source: str, tree: ast.Module, summary: ModuleSummary) -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.summary = summary
        # The file's facts and its methods' (``analysis.facts``): a re-read file starts afresh.
        self.facts = FactStore()

    # -- text --------------------------------------------------------------------------------------

    @cached_property
    def line_starts(self) -> list[int]:
        """Offset of each line's first character. Without ``\\r`` (nearly every file) the line lengths
        give them three times faster than a regular expression over the text."""
        if "\r" in self.source:
            return [0] + [m.end() for m in _NEWLINE.finditer(self.source)]
        lines = self.lines  # split once: ``lines`` is needed anyway (noqa)
        return [0, *accumulate(map(add, map(len, islice(lines, len(lines) - 1)), repeat(1)))]

    @cached_property
    def construction_offsets(self) -> list[int]:
        """Where the file may construct a library class (``prefilter``): found once, for the engine's
        gate and for TW304."""
        return prefilter.construction_offsets(self.source)

    @cached_property
    def lines(self) -> list[str]:
        """Physical lines without their endings (``\\r`` alone ends a line too, as for ``ast``)."""
        return _NEWLINE.split(self.source) if "\r" in self.source else self.source.split("\n")

    def text(self, first_line: int, last_line: int) -> str:
        starts = self.line_starts
        begin = starts[first_line - 1] if first_line - 1 < len(starts) else len(self.source)
        end = starts[last_line] if last_line < len(starts) else len(self.source)
        return self.source[begin:end]

    def line_of(self, offset: int) -> int:
        return bisect_right(self.line_starts, offset)

    def match_lines(self, pattern: Scan) -> list[int]:
        """Sorted lines of every match of ``pattern`` in the file: one scan per pattern per file,
        then every method asks for its own range (``lines_matching``)."""
        return self.facts.get(
            MATCH_LINES,
            pattern.pattern,
            lambda: sorted({self.line_of(at) for at, _ in _matches(pattern, self.source)}),
        )

    def lines_matching(self, first_line: int, last_line: int, pattern: Scan) -> set[int]:
        """Lines in [first_line, last_line] where ``pattern`` matches."""
        lines = self.match_lines(pattern)
        return set(lines[bisect_left(lines, first_line) : bisect_right(lines, last_line)])

    def names_matching(self, pattern: Scan) -> dict[str, list[int]]:
        """``group(1)`` of every match of ``pattern`` -> the sorted lines it occurs on (one scan)."""

        def compute() -> dict[str, list[int]]:
            found: dict[str, set[int]] = {}
            for at, m in _matches(pattern, self.source):
                found.setdefault(m.group(1), set()).add(self.line_of(at))
            return {k: sorted(v) for k, v in found.items()}

        return self.facts.get(NAMES_MATCHING, pattern.pattern, compute)

    def column(self, line: int, byte_col: int) -> int:
        """1-based character column (``ast`` counts UTF-8 bytes)."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return char_column(text, byte_col) + 1

    # -- nodes -------------------------------------------------------------------------------------

    def class_node(self, cls: ClassSummary) -> ast.ClassDef | None:
        def compute() -> ast.ClassDef | None:
            for node in statements_at(self.tree.body, cls.line):
                if isinstance(node, ast.ClassDef) and node.lineno == cls.line and node.name == cls.name:
                    return node
            return None

        return self.facts.get(CLASS_NODE, cls.qualname, compute)  # type: ignore[no-any-return]

    def method_node(self, cls: ClassSummary, method: MethodSummary) -> FunctionNode | None:
        node = self.class_node(cls)
        if node is None:
            return None
        for stmt in node.body:
            if isinstance(stmt, FUNCTION_TYPES) and stmt.lineno == method.line:
                return stmt
        return None


def _matches(pattern: Scan, text: str) -> Iterator[tuple[int, re.Match[str]]]:
    if isinstance(pattern, LiteralScan):
        return pattern.finditer(text)
    return ((m.start(), m) for m in pattern.finditer(text))


def statements_at(body: list[ast.stmt], line: int) -> Iterator[ast.stmt]:
    """Statements whose line span holds ``line``, outermost first (a narrowing walk).

    Siblings are in source order, so the ones holding ``line`` are found by bisection on their last
    lines: a module of thousands of classes costs each lookup a logarithm, not a scan of the module."""
    stack: list[ast.AST] = _holding(body, line)[::-1]
    while stack:
        stmt = stack.pop()
        yield stmt  # type: ignore[misc]
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(stmt, name, None)
            if children:
                stack.extend(_holding(children, line)[::-1])


def _last_line(node: ast.AST) -> int:
    span = line_span(node)  # a ``case`` clause has no position of its own
    return span[1] if span is not None else 0


def _holding(block: Sequence[ast.AST], line: int) -> list[ast.AST]:
    """The members of ``block`` (siblings, in source order) whose span holds ``line``."""
    out = []
    for node in islice(block, bisect_left(block, line, key=_last_line), None):
        span = line_span(node)
        if span is None:
            continue
        if span[0] > line:
            break
        out.append(node)
    return out


def own_statements(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """Every statement of ``fn``'s own body, nested blocks included, in source order, without
    entering functions or classes defined in it (their statements run in another frame). A loop,
    not recursion: a deeply nested body must not exhaust the stack."""
    out: list[ast.stmt] = []
    stack: list[ast.stmt] = list(reversed(fn.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append(stmt)
        stack.extend(reversed(nested_statements(stmt)))
    return out


def nodes_on_lines(fn: ast.AST, lines: set[int], want: Callable[[ast.AST], bool]) -> list[ast.AST]:
    """Nodes ``want`` accepts among the expressions of the statements of ``fn`` that span one of
    ``lines``: a narrowing walk, proportional to what it finds, not to the size of ``fn``."""
    found: list[ast.AST] = []
    if not lines:
        return found
    body = getattr(fn, "body", [])
    for line in sorted(lines):
        for stmt in statements_at(body, line):
            for child in child_nodes(stmt):
                if isinstance(child, (ast.stmt, *STATEMENT_HOLDERS)):
                    continue  # visited by statements_at, which narrows them by line
                stack = [child]
                while stack:
                    node = stack.pop()
                    first = getattr(node, "lineno", None)
                    if first is not None and not first <= line <= (
                        node.end_lineno or first  # type: ignore[attr-defined]  # as every node with a lineno
                    ):
                        continue  # nothing below a node starts on a line outside the node
                    if first == line and want(node):
                        found.append(node)
                    stack.extend(child_nodes(node))
    unique: dict[int, ast.AST] = {id(n): n for n in found}
    return list(unique.values())
