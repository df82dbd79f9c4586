"""TW304 fix: rename a keyword argument the target releases renamed (``tokenizer=`` ->
``processing_class=``, ``evaluation_strategy=`` -> ``eval_strategy=``); the value is kept as written.

The rule attaches this edit only when the new name is accepted on every release of the target range
and the call does not pass the new name already.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from trainwright_lint.rules._cst import LineTransformer
from trainwright_lint.rules.tw304_removed_argument import RenameKeyword


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[RenameKeyword]) -> None:
        super().__init__()
        self.edits: dict[int, dict[str, str]] = {}
        for e in edits:
            self.edits.setdefault(e.line, {})[e.old] = e.new

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        renames = self.edits.get(self.line_of(original))
        if not renames:
            return updated
        present = {a.keyword.value for a in updated.args if a.keyword is not None}
        args = []
        for arg in updated.args:
            new = renames.get(arg.keyword.value) if arg.keyword is not None else None
            if new is not None and new not in present:
                arg = arg.with_changes(keyword=cst.Name(new))
            args.append(arg)
        return updated.with_changes(args=args)
