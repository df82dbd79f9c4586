"""TW401 fix (unsafe): rename a misspelt event method to the one real event it unambiguously means.

Unsafe because it changes behaviour: code that never ran starts running at that event. Only offered
when exactly one real event matches and the class does not define that name already.
"""

from __future__ import annotations

import libcst as cst

from trainwright_lint.rules._cst import MethodTransformer
from trainwright_lint.rules.tw401_unknown_event import RenameMethod


class Fixer(MethodTransformer[RenameMethod]):
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        edit = self.edit_for(original)
        if edit is None:
            return updated
        return updated.with_changes(name=cst.Name(edit.new))
