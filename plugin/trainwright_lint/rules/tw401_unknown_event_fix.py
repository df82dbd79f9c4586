"""TW401 fix (unsafe): rename a misspelt event method to the one real event it unambiguously means.

Unsafe because it changes behaviour: code that never ran starts running at that event. Only offered
when exactly one real event matches and the class does not define that name already.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from trainwright_lint.rules._cst import LineTransformer
from trainwright_lint.rules.tw401_unknown_event import RenameMethod


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[RenameMethod]) -> None:
        super().__init__()
        self.edits = {(e.line, e.method): e for e in edits}

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        edit = self.edits.get((self.def_line(original), original.name.value))
        if edit is None:
            return updated
        return updated.with_changes(name=cst.Name(edit.new))
