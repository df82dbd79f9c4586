"""TW301 fix: add the parameters the Trainer passes and forward them to ``super()``.

``def compute_loss(self, model, inputs, return_outputs=False)`` becomes
``def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None)`` and its
``super().compute_loss(model, inputs, return_outputs)`` gains ``num_items_in_batch=num_items_in_batch``.
New parameters go after the existing positional ones (so positional call sites bind them), or become
keyword-only when the method already takes ``*args``. Only parameters some call site of the target
release fills are added (a base parameter the override names differently is left out). New
parameters follow the layout of the existing ones (``rules._cst.extend_commas``). Forwarding uses
keywords, which bind whatever the order, and is skipped for a call that already passes the name or
unpacks ``**kwargs``.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from trainwright_lint.rules._cst import MethodTransformer, extend_commas, is_super_call
from trainwright_lint.rules.tw301_incompatible_signature import AddParams, NewParam


def _param(name: str, default: str) -> cst.Param:
    return cst.Param(
        name=cst.Name(name),
        default=cst.parse_expression(default),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def add_parameters(
    params: cst.Parameters, edit: AddParams, opening: cst.BaseParenthesizableWhitespace | None = None
) -> cst.Parameters:
    """``params`` with the edit's missing parameters appended, laid out like the existing ones.

    The parameters (``/`` and ``*`` markers included) are laid out as one flat list so that the new ones
    follow the existing layout wherever the old last parameter sits (``extend_commas``), then put
    back in their libcst fields."""
    existing = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            existing.add(star.name.value)
    missing = [p for p in edit.params if p.name not in existing]
    if not missing or isinstance(params.star_kwarg, cst.Param):
        return params  # nothing to add, or ``**kwargs`` (after which nothing can be appended) takes it
    # After ``*args`` or a bare ``*`` only keyword-only parameters can be added.
    keyword_zone = isinstance(params.star_arg, (cst.Param, cst.ParamStar))
    positional = [_param(p.name, p.default) for p in missing if not (p.keyword_only or keyword_zone)]
    keyword = [_param(p.name, p.default) for p in missing if p.keyword_only or keyword_zone]
    slash = params.posonly_ind if isinstance(params.posonly_ind, cst.ParamSlash) else None
    star = params.star_arg if keyword_zone else (cst.ParamStar() if keyword else None)
    flat: list[cst.Param | cst.ParamSlash | cst.ParamStar] = [
        *params.posonly_params,
        *([slash] if slash else []),
    ]
    flat += params.params
    if keyword_zone:
        flat += [params.star_arg, *params.kwonly_params]  # type: ignore[list-item]
    # With no ``*`` yet, positional and keyword-only additions both go after the last parameter.
    added = [*positional, *([star] if star is not None and not keyword_zone else []), *keyword]
    laid = extend_commas(flat, added, opening)
    i = len(params.posonly_params)
    changes: dict[str, object] = {"posonly_params": laid[:i]}
    if slash is not None:
        changes["posonly_ind"] = laid[i]
        i += 1
    n_params = len(params.params) + len(positional)
    changes["params"] = laid[i : i + n_params]
    i += n_params
    if star is not None:
        changes["star_arg"] = laid[i]
        changes["kwonly_params"] = laid[i + 1 :]
    return params.with_changes(**changes)


class _Forward(cst.CSTTransformer):
    def __init__(self, method: str, params: Sequence[NewParam]) -> None:
        super().__init__()
        self.method, self.params = method, params

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # nested functions are not the override's own super() calls

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not is_super_call(updated.func, self.method):
            return updated
        if any(a.star for a in updated.args):
            return updated  # ``*args``/``**kwargs`` may already carry it: passing it again would clash
        passed = {a.keyword.value for a in updated.args if a.keyword is not None}
        n_positional = sum(1 for a in updated.args if a.keyword is None)
        add = [
            p.name
            for p in self.params
            if p.name not in passed and (p.position is None or n_positional <= p.position)
        ]
        if not add:
            return updated
        equal = cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        )
        new = [cst.Arg(keyword=cst.Name(n), value=cst.Name(n), equal=equal) for n in add]
        args = extend_commas(list(updated.args), new, updated.whitespace_before_args)
        return updated.with_changes(args=args)


class Fixer(MethodTransformer[AddParams]):
    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        edit = self.edit_for(original)
        if edit is None:
            return updated
        params = add_parameters(updated.params, edit, updated.whitespace_before_params)
        if params is updated.params:
            return updated
        body = updated.body
        # Forward only names the override did not have before (existing ones are the user's business).
        before = {p.name.value for p in (*original.params.params, *original.params.kwonly_params)}
        forward = [p for p in edit.forward if p.name not in before]
        if forward:
            body = body.visit(_Forward(edit.method, forward))  # type: ignore[assignment]
        return updated.with_changes(params=params, body=body)
