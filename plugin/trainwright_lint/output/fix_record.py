"""A finding's fix as the output formats report it: ruff's ``{"applicability", "message", "edits"}``.

Read from ``Finding.fix`` and nothing else, so a record never claims a fix the fixer would not make.
``Finding.fix`` holds an edit description (a ``trainwright_lint.edits.Edit``, defined by the rule
that plans it: plain data with an ``unsafe`` flag and a ``describe()``) when the rule has a fix for the finding that is valid on the whole target
range.

``edits`` lists text replacements when the fix carries them (an object, or a sequence ``fix.edits``
of objects, with ``content``, ``line``, ``column``, ``end_line``, ``end_column`` in ``Finding``'s
1-based convention): ``output.text_edits`` spells a rule's edit description that way, from the
fixer's own output, before the JSON is written; a bare edit description gives ``[]``.
"""

from __future__ import annotations

from typing import Any

from trainwright_lint.edits import Edit

APPLICABILITIES = ("safe", "unsafe", "display-only")


def applicability(fix: Any) -> str:
    """``safe`` / ``unsafe`` for an edit the fixer applies (an ``Edit``: its ``unsafe`` flag); for
    another object, the ``applicability`` it declares, else ``display-only``."""
    if isinstance(fix, Edit):
        return "unsafe" if fix.unsafe else "safe"
    declared = getattr(fix, "applicability", None)
    return str(declared) if declared in APPLICABILITIES else "display-only"


def message(fix: Any) -> str:
    if isinstance(fix, Edit):
        return fix.describe()
    return str(getattr(fix, "message", None) or "Apply the automatic fix (`trainwright fix`)")


def _position(row: int, column: int) -> dict[str, int]:
    return {"column": column, "row": row}


def edits(fix: Any) -> list[dict[str, Any]]:
    spans = getattr(fix, "edits", None)
    candidates = list(spans) if isinstance(spans, (list, tuple)) else [fix]
    out = []
    for e in candidates:
        if not all(hasattr(e, a) for a in ("content", "line", "column", "end_line", "end_column")):
            continue
        out.append(
            {
                "content": e.content,
                "end_location": _position(e.end_line, e.end_column),
                "location": _position(e.line, e.column),
            }
        )
    return out


def fix_record(fix: Any) -> dict[str, Any] | None:
    """The JSON ``fix`` of a finding: ``None`` when it has none."""
    if fix is None:
        return None
    return {"applicability": applicability(fix), "edits": edits(fix), "message": message(fix)}


def has_safe_fix(fix: Any) -> bool:
    """What ruff marks ``[*]``: a fix that ``trainwright fix`` applies without ``--unsafe-fixes``."""
    return fix is not None and applicability(fix) == "safe"
