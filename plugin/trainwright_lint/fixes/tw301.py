"""TW301 fix: add the parameters the Trainer passes and forward them to ``super()``.

``def compute_loss(self, model, inputs, return_outputs=False)`` becomes
``def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None)`` and its
``super().compute_loss(model, inputs, return_outputs)`` gains ``num_items_in_batch=num_items_in_batch``.
New parameters go after the existing positional ones (so positional call sites bind them), or become
keyword-only when the method already takes ``*args``. Forwarding uses keywords, which bind whatever the
order, and is skipped for a call that already passes the name or unpacks ``**kwargs``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from trainwright.catalog import CallSite, Param, Signature
from trainwright_lint.fixes._locate import LineTransformer, extend_commas, is_super_call
from trainwright_lint.fixes.edits import AddParams, NewParam
from trainwright_lint.rules._ast import signature_of

CODE = "TW301"


def _param(name: str, default: str) -> cst.Param:
    return cst.Param(
        name=cst.Name(name),
        default=cst.parse_expression(default),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def _append(
    params: Sequence[cst.Param],
    new: list[cst.Param],
    opening: cst.BaseParenthesizableWhitespace | None = None,
) -> list[cst.Param]:
    return extend_commas(list(params), new, opening)


def add_parameters(
    params: cst.Parameters, edit: AddParams, opening: cst.BaseParenthesizableWhitespace | None = None
) -> cst.Parameters:
    existing = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            existing.add(star.name.value)
    missing = [p for p in edit.params if p.name not in existing]
    if not missing:
        return params
    # After ``*args`` or a bare ``*`` only keyword-only parameters can be added.
    keyword_zone = isinstance(params.star_arg, (cst.Param, cst.ParamStar))
    positional = [_param(p.name, p.default) for p in missing if not (p.keyword_only or keyword_zone)]
    keyword = [_param(p.name, p.default) for p in missing if p.keyword_only or keyword_zone]
    changes: dict[str, object] = {}
    if positional:
        changes["params"] = _append(params.params, positional, opening)
    if keyword:
        if not keyword_zone:
            changes["star_arg"] = cst.ParamStar()
        changes["kwonly_params"] = _append(params.kwonly_params, keyword)
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


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[AddParams]) -> None:
        super().__init__()
        self.edits = {(e.line, e.method): e for e in edits}

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        edit = self.edits.get((self.def_line(original), original.name.value))
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


def plan(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, base: Signature, sites: Sequence[CallSite]
) -> AddParams | None:
    """The edit that makes ``fn`` accept every call site in ``sites``, or None when adding the base
    method's missing parameters (with their defaults, ``None`` when the base has none) is not enough
    or would shift a positional argument onto the wrong parameter."""
    if fn.args.kwarg is not None:
        return None
    current = signature_of(fn)
    own = {p.name for p in current.params}
    own_positional = [p for p in current.params if p.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    has_star = fn.args.vararg is not None or bool(fn.args.kwonlyargs)
    base_params = list(base.params[1:] if base.bound else base.params)
    base_positional = [p.name for p in base_params if p.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    new: list[NewParam] = []
    next_slot = len(own_positional) - (1 if current.bound else 0)
    for p in base_params:
        if p.name in own or p.kind in ("VAR_POSITIONAL", "VAR_KEYWORD", "POSITIONAL_ONLY"):
            continue
        position = base_positional.index(p.name) if p.name in base_positional else None
        # Appended positionally only where it keeps its base position; otherwise keyword-only.
        keyword_only = p.kind == "KEYWORD_ONLY" or has_star or position != next_slot
        if not keyword_only:
            next_slot += 1
        new.append(NewParam(p.name, p.default if p.default is not None else "None", keyword_only, position))
    if not new:
        return None
    extra = tuple(
        Param(n.name, "KEYWORD_ONLY" if n.keyword_only else "POSITIONAL_OR_KEYWORD", n.default) for n in new
    )
    positional_extra = tuple(x for x in extra if x.kind != "KEYWORD_ONLY")
    keyword_extra = tuple(x for x in extra if x.kind == "KEYWORD_ONLY")
    params = list(current.params)
    cut = next(
        (i for i, x in enumerate(params) if x.kind not in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")),
        len(params),
    )
    params[cut:cut] = positional_extra
    kw_cut = next((i for i, x in enumerate(params) if x.kind == "VAR_KEYWORD"), len(params))
    params[kw_cut:kw_cut] = keyword_extra
    fixed = Signature(tuple(params), bound=current.bound)
    if not all(fixed.accepts(s.n_positional, s.keywords, s.star_args, s.star_kwargs) for s in sites):
        return None
    return AddParams(method=fn.name, line=fn.lineno, params=tuple(new), forward=tuple(new))
