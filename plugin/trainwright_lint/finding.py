"""The ``Finding`` record every rule produces and every output format consumes.

Positions are 1-based lines and 1-based columns (what editors and ``flake8`` print); ``end_column``
is exclusive. A finding keeps the ``ast`` node it was reported on and has a ``fix`` slot so that a
later autofix pass can attach a replacement without changing the rules' interface.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One reported problem, with everything every output format and the fixer need (its fix
    included), so that nothing is recomputed after the rules ran."""

    code: str
    name: str
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    class_name: str | None = None
    method: str | None = None
    # Physical lines whose ``noqa`` comment covers this finding (flake8's logical-line rule).
    noqa_lines: tuple[int, int] = field(default=(0, 0), compare=False, repr=False)
    node: ast.AST | None = field(default=None, compare=False, repr=False)
    # The edit that fixes it (a ``trainwright_lint.edits.Edit`` of the rule), when one is valid on the whole target range.
    fix: Any = field(default=None, compare=False, repr=False)
    # Why there is no fix although the rule has one (e.g. not valid on every release of the range).
    fix_note: str = field(default="", compare=False, repr=False)
    # The target releases where it holds (empty: it does not depend on the release).
    releases: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # TW2xx: the (first, last) lines of the statements that belong in a callback, which is what
    # `fix --suggest` moves (the override's data path stays where it is).
    moved: tuple[tuple[int, int], ...] = field(default=(), compare=False, repr=False)
    # TW2xx: what the moved code does, the message's first verb (``times``, ``advances``, ``runs``,
    # ``adds``, ``keeps``): a rule's preview variants are (method, kind) pairs (``Rule.preview_variants``).
    kind: str = field(default="", compare=False, repr=False)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def as_dict(self) -> dict[str, Any]:
        """The JSON record (field names fixed by the issue)."""
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "class": self.class_name,
            "method": self.method,
        }


NOT_LINTED = "TW000"


def not_linted(path: str, message: str, line: int | None = 1, column: int | None = 1) -> Finding:
    """The TW000 diagnostic for a file the linter could not check (does not parse, cannot be read,
    ran past the per-file time limit): reported like a finding instead of a traceback."""
    line = max(1, line or 1)
    column = max(1, column or 1)
    return Finding(
        code=NOT_LINTED,
        name="file-not-linted",
        message=message,
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=column + 1,
    )
