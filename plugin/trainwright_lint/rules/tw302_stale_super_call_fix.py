"""TW302 fix: drop the arguments of a ``super().m(...)`` call that the target ``Trainer.m`` rejects.

Dropped: an explicit leading ``self`` (``super().m(self, x)``), keyword arguments the base method has
no parameter for (``metrics=`` to ``_save_checkpoint`` on 4.47+), and trailing positional arguments
beyond what it takes. The rule only attaches this fix when the call binds after the drop.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from trainwright_lint.rules._cst import LineTransformer, is_super_call
from trainwright_lint.rules.tw302_stale_super_call import DropArgs


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[DropArgs]) -> None:
        super().__init__()
        self.edits = {(e.line, e.method): e for e in edits}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not isinstance(updated.func, cst.Attribute) or not is_super_call(
            updated.func, updated.func.attr.value
        ):
            return updated
        edit = self.edits.get((self.line_of(original), updated.func.attr.value))
        if edit is None:
            return updated
        kept: list[cst.Arg] = []
        n_positional = 0
        for i, arg in enumerate(updated.args):
            positional = arg.keyword is None and arg.star == ""
            if (
                positional
                and i == 0
                and edit.drop_self
                and isinstance(arg.value, cst.Name)
                and arg.value.value == "self"
            ):
                continue
            if arg.keyword is not None and arg.keyword.value in edit.keywords:
                continue
            if positional:
                n_positional += 1
                if edit.keep_positional is not None and n_positional > edit.keep_positional:
                    continue
            kept.append(arg)
        if len(kept) == len(updated.args):
            return updated
        if kept:
            # The last kept argument takes the comma that ended the original list (none, or a trailing one).
            kept[-1] = kept[-1].with_changes(comma=updated.args[-1].comma)
        return updated.with_changes(args=kept)
