"""TW401 fix (unsafe): rename a misspelt event method to the one real event it unambiguously means.

Unsafe because it changes behaviour: code that never ran starts running at that event. Only offered
when exactly one real event matches and the class does not define that name already.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping, Sequence

import libcst as cst

from trainwright_lint.fixes._locate import LineTransformer
from trainwright_lint.fixes.edits import RenameMethod

CODE = "TW401"


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[RenameMethod]) -> None:
        super().__init__()
        self.edits = {(e.line, e.method): e for e in edits}

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        edit = self.edits.get((self.def_line(original), original.name.value))
        if edit is None:
            return updated
        return updated.with_changes(name=cst.Name(edit.new))


def unambiguous_event(name: str, events: Sequence[str], near_misses: Mapping[str, str]) -> str | None:
    """The single real event ``name`` is a misspelling of, or None when there is no clear one.

    A hand-picked near miss counts when it is a plain event name. Otherwise the closest event must be
    similar (difflib ratio >= 0.85) and clearly closer than the runner-up (by >= 0.07):
    ``on_step_ned`` -> ``on_step_end`` (0.91 vs 0.80 for ``on_substep_end``), while ``on_step``
    (``on_step_end`` 0.78, ``on_step_begin`` 0.70) and ``on_save_end`` (``on_step_end`` 0.82,
    ``on_save`` 0.78) are left to a human."""
    picked = near_misses.get(name)
    if picked is not None:
        return picked if picked in events else None
    scored = sorted(((difflib.SequenceMatcher(None, name, e).ratio(), e) for e in events), reverse=True)
    if not scored or scored[0][0] < 0.85:
        return None
    if len(scored) > 1 and scored[0][0] - scored[1][0] < 0.07:
        return None
    return scored[0][1]


def plan(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    events: Sequence[str],
    near_misses: Mapping[str, str],
    taken: set[str],
) -> RenameMethod | None:
    new = unambiguous_event(fn.name, events, near_misses)
    if new is None or new in taken:
        return None
    return RenameMethod(method=fn.name, line=fn.lineno, new=new)
