"""TW303 fix: ``self.tokenizer`` -> ``self.processing_class`` (the attribute that replaced it in 4.46)."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from trainwright_lint.rules._cst import LineTransformer
from trainwright_lint.rules.tw303_removed_api import RenameSelfAttribute


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[RenameSelfAttribute]) -> None:
        super().__init__()
        self.edits = {(e.line, e.old): e for e in edits}

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        if not (isinstance(updated.value, cst.Name) and updated.value.value == "self"):
            return updated
        edit = self.edits.get((self.line_of(original), updated.attr.value))
        if edit is None:
            return updated
        return updated.with_changes(attr=cst.Name(edit.new))
