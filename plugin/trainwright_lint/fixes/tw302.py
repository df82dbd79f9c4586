"""TW302 fix: drop the arguments of a ``super().m(...)`` call that the target ``Trainer.m`` rejects.

Dropped: an explicit leading ``self`` (``super().m(self, x)``), keyword arguments the base method has
no parameter for (``metrics=`` to ``_save_checkpoint`` on 4.47+), and trailing positional arguments
beyond what it takes. The rule only attaches this fix when the call binds after the drop.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from trainwright.catalog import Signature
from trainwright_lint.fixes._locate import LineTransformer, is_super_call
from trainwright_lint.fixes.edits import DropArgs

CODE = "TW302"


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


def plan(call: ast.Call, method: str, base: Signature) -> DropArgs | None:
    """Drop an explicit ``self``, unknown keywords and surplus positional arguments, if the call
    then binds to ``base``; None when dropping is not enough (a required argument is missing)."""
    params = list(base.params[1:] if base.bound else base.params)
    names = {p.name for p in params if p.kind != "POSITIONAL_ONLY"}
    var_kw = any(p.kind == "VAR_KEYWORD" for p in params)
    var_pos = any(p.kind == "VAR_POSITIONAL" for p in params)
    capacity = sum(1 for p in params if p.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"))
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    star_args = len(positional) != len(call.args)
    drop_self = bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"
    n_pos = len(positional) - int(drop_self)
    keep = None if var_pos or star_args or n_pos <= capacity else capacity
    keywords = tuple(k.arg for k in call.keywords if k.arg is not None and not var_kw and k.arg not in names)
    kept_keywords = [k.arg for k in call.keywords if k.arg is not None and k.arg not in keywords]
    star_kwargs = any(k.arg is None for k in call.keywords)
    if not (drop_self or keywords or keep is not None):
        return None
    if not base.accepts(n_pos if keep is None else keep, kept_keywords, star_args, star_kwargs):
        return None
    return DropArgs(
        method=method, line=call.lineno, drop_self=drop_self, keywords=keywords, keep_positional=keep
    )
