"""How to fix a finding, decided from the syntax and the catalogue: pure ``ast`` planners that turn
a finding into an edit (``trainwright_lint.edits``).

They live on the rules' side, without libcst (which costs a third of a second to import), so that a
finding carries its fix from the moment it is reported; ``fixes/`` only applies edits. Every planner
returns ``None`` rather than guess.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from trainwright.catalog import CallSite, Param, Signature
from trainwright_lint.edits import AddParams, AddVarKeyword, DropArgs, NewParam, RenameSelfAttribute
from trainwright_lint.syntax import signature_of


def _needed(base_positional: Sequence[str], own_slots: int, sites: Sequence[CallSite]) -> set[str] | None:
    """The base parameters some call site fills: by keyword, or by position (the slots past the
    override's own ``own_slots`` positional parameters, up to the most positional arguments any site
    passes). ``None`` (all of them) when a site unpacks ``*args`` or
    ``**kwargs``, whose content is unknown.

    Without this an override that names a parameter differently, ``compute_loss(self, my_model,
    inputs, return_outputs=False)``, was given the base's ``model`` as ``*, model=None``: the
    Trainer passes the model positionally, so nothing ever fills that parameter."""
    if any(s.star_args or s.star_kwargs for s in sites):
        return None
    most = max((s.n_positional for s in sites), default=0)
    return {k for s in sites for k in s.keywords} | set(base_positional[own_slots:most])


def signature_with(current: Signature, new: Sequence[NewParam]) -> Signature:
    """``current`` with ``new`` added where ``AddParams`` puts them: positional ones after the
    existing positional parameters, keyword-only ones before ``**kwargs``."""
    extra = [
        Param(n.name, "KEYWORD_ONLY" if n.keyword_only else "POSITIONAL_OR_KEYWORD", n.default) for n in new
    ]
    params = list(current.params)
    cut = next(
        (i for i, x in enumerate(params) if x.kind not in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")),
        len(params),
    )
    params[cut:cut] = [x for x in extra if x.kind != "KEYWORD_ONLY"]
    kw_cut = next((i for i, x in enumerate(params) if x.kind == "VAR_KEYWORD"), len(params))
    params[kw_cut:kw_cut] = [x for x in extra if x.kind == "KEYWORD_ONLY"]
    return Signature(tuple(params), bound=current.bound)


def plan_add_params(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    base: Signature,
    sites: Sequence[CallSite],
    *,
    forward: bool = True,
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
    needed = _needed(base_positional, next_slot, sites)
    for p in base_params:
        if p.name in own or p.kind in ("VAR_POSITIONAL", "VAR_KEYWORD", "POSITIONAL_ONLY"):
            continue
        if needed is not None and p.name not in needed:
            continue  # no call site passes it: adding it would only be noise (``*, model=None``)
        position = base_positional.index(p.name) if p.name in base_positional else None
        # Appended positionally only where it keeps its base position; otherwise keyword-only.
        keyword_only = p.kind == "KEYWORD_ONLY" or has_star or position != next_slot
        if not keyword_only:
            next_slot += 1
        new.append(NewParam(p.name, p.default if p.default is not None else "None", keyword_only, position))
    if not new:
        return None
    fixed = signature_with(current, new)
    if not all(fixed.accepts(s.n_positional, s.keywords, s.star_args, s.star_kwargs) for s in sites):
        return None
    return AddParams(method=fn.name, line=fn.lineno, params=tuple(new), forward=tuple(new) if forward else ())


def plan_drop_args(call: ast.Call, method: str, base: Signature) -> DropArgs | None:
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
    import difflib  # only for a misspelt event: not worth its import on every run

    scored = sorted(((difflib.SequenceMatcher(None, name, e).ratio(), e) for e in events), reverse=True)
    if not scored or scored[0][0] < 0.85:
        return None
    if len(scored) > 1 and scored[0][0] - scored[1][0] < 0.07:
        return None
    return scored[0][1]


def plan_tokenizer_rename(node: ast.Attribute) -> RenameSelfAttribute | None:
    """Only a read of ``self.tokenizer`` (the trainer-side finding) has a mechanical fix."""
    if node.attr != "tokenizer" or not (isinstance(node.value, ast.Name) and node.value.id == "self"):
        return None
    return RenameSelfAttribute(line=node.lineno, old="tokenizer", new="processing_class")


def plan_var_keyword(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> AddVarKeyword | None:
    return None if fn.args.kwarg is not None else AddVarKeyword(method=fn.name, line=fn.lineno)
