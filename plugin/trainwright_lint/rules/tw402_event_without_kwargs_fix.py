"""TW402 fix: add ``**kwargs`` to a callback event method (the handler always passes keywords)."""

from __future__ import annotations

import libcst as cst

from trainwright_lint.rules._cst import MethodTransformer, extend_commas
from trainwright_lint.rules.tw402_event_without_kwargs import AddVarKeyword


class Fixer(MethodTransformer[AddVarKeyword]):
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if self.edit_for(original) is None:
            return updated
        params = updated.params
        if isinstance(params.star_kwarg, cst.Param):
            return updated
        taken = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        if isinstance(params.star_arg, cst.Param):
            taken.add(params.star_arg.name.value)
        name = next(n for n in ("kwargs", "_kwargs", "event_kwargs", "__kwargs") if n not in taken)
        # Keep a one-parameter-per-line layout: the new parameter reuses the explicit trailing comma.
        # Lay ``**kwargs`` out like the other parameters (see ``extend_commas``): the last existing
        # parameter sits in one of three places, so lay out a flat list and put it back.
        flat: list[cst.Param | cst.ParamStar] = [*params.posonly_params, *params.params]
        has_star = isinstance(params.star_arg, (cst.Param, cst.ParamStar))
        if has_star:
            flat.append(params.star_arg)  # type: ignore[arg-type]
        flat += params.kwonly_params
        laid = extend_commas(
            flat, [cst.Param(name=cst.Name(name), star="**")], updated.whitespace_before_params
        )
        n_pos, n_reg = len(params.posonly_params), len(params.params)
        changes: dict[str, object] = {
            "posonly_params": laid[:n_pos],
            "params": laid[n_pos : n_pos + n_reg],
            "kwonly_params": laid[n_pos + n_reg + int(has_star) : -1],
            "star_kwarg": laid[-1],
        }
        if has_star:
            changes["star_arg"] = laid[n_pos + n_reg]
        return updated.with_changes(params=params.with_changes(**changes))
