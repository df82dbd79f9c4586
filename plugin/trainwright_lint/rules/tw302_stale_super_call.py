"""TW302: a ``super().m(...)`` call that the next class in the MRO cannot accept."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, replace

from trainwright.catalog import Signature
from trainwright_lint.analysis.facts import METHODS, SUPER_CALLS
from trainwright_lint.edits import Edit, quoted
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import short_name
from trainwright_lint.rules._super_target import super_target
from trainwright_lint.rules.base import (
    SAFE,
    Candidate,
    ClassContext,
    Example,
    Fact,
    Rule,
    library_class_fact,
    library_fact,
    trainer_fact,
)
from trainwright_lint.rules.tw301_incompatible_signature import describe_call
from trainwright_lint.syntax import call_shape, super_method


def _reads(ctx: ClassContext, concrete: tuple[str, ...], method: str) -> tuple[Fact, ...]:
    """The catalogue facts ``super_target`` may read for ``method``: transformers' trainers and the
    TRL classes of the MROs."""
    reads = [trainer_fact("Trainer", method), trainer_fact("Seq2SeqTrainer", method)]
    for key in dict.fromkeys(k for c in concrete for k in ctx.workspace.model.info(c).mro_keys):
        if key.startswith("trl."):
            short = key.split(".", 1)[1]
            reads += [library_fact(short, method), library_class_fact(short)]
    return tuple(reads)


@dataclass(frozen=True)
class DropArgs(Edit):
    """TW302: drop the arguments of ``super().<method>(...)`` the target release cannot accept."""

    method: str
    line: int
    drop_self: bool  # an explicit leading ``self``
    keywords: tuple[str, ...]  # keyword arguments to drop
    keep_positional: int | None  # keep at most this many positional arguments (None: all)
    unsafe: bool = False

    def describe(self) -> str:
        dropped = ["the explicit `self`"] if self.drop_self else []
        if self.keywords:
            dropped.append(quoted(f"{k}=" for k in self.keywords))
        if self.keep_positional is not None:
            dropped.append(f"positional arguments after the first {self.keep_positional}")
        return f"Remove {' and '.join(dropped) or 'the rejected arguments'} from `super().{self.method}()`"


class StaleSuperCall(Rule):
    """A `super().m(...)` call passes arguments that the next class in the MRO cannot accept:
    `super()._save_checkpoint(model, trial, metrics=metrics)` on transformers 4.47+ (where
    `metrics` was removed), `super().compute_loss(..., num_items_in_batch=n)` before 4.46, an
    explicit `self` inside the super call (`super().m(self, ...)`), or arguments a project base
    class or TRL's trainer does not take.

    The next class is found in the real MRO: for a mixin combined with TRL's `GRPOTrainer`, it is
    TRL's method, not transformers'. When an external class whose methods trainwright does not know
    comes first, nothing is reported. `super().__init__(...)` is checked by TW304.
    """

    FIX = (
        "Drop the arguments the base method no longer takes (and any explicit `self`); when you must "
        "support several releases, forward `*args, **kwargs` instead of naming them."
    )
    EVIDENCE = (
        "https://github.com/huggingface/transformers/pull/11738",
        "https://github.com/2U1/Phi3-Vision-Finetune/issues/39",
        "https://github.com/zai-org/GLM-4/issues/652",
    )

    code = "TW302"
    FACTS = (
        METHODS,
        SUPER_CALLS,
    )
    name = "stale-super-call"
    fix_applicability = SAFE
    fix_module = "trainwright_lint.rules.tw302_stale_super_call_fix"
    fix_pass = 3
    fix_title = "drop the argument the base method rejects"
    message = (
        "`super().{method}()` passes arguments that `{owner}` rejects; "
        "`super().{method}({call_text})` passes {call} to `{owner}.{method}{signature}`{where}{hint}"
    )

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial, metrics=None):
                    super()._save_checkpoint(model, trial, metrics=metrics)
            """,
            line=5,
            fixed="""
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial, metrics=None):
                    super()._save_checkpoint(model, trial)
            """,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)
            """,
            version="4.45.2",
            line=5,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial, *args, **kwargs):
                    super()._save_checkpoint(model, trial, *args, **kwargs)
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial, metrics=None):
                    super()._save_checkpoint(model, trial, metrics=metrics)
            """,
            version="4.46.3",
        ),
        Example(
            """
            from trl import GRPOTrainer

            class RewardMixin:
                def __init__(self, *args, reward_funcs=None, **kwargs):
                    super().__init__(*args, reward_funcs=reward_funcs, **kwargs)

                def _save_checkpoint(self, model, trial):
                    super()._save_checkpoint(model, trial)

            class MyGRPO(RewardMixin, GRPOTrainer):
                pass
            """
        ),
    )

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        concrete = ctx.users if ctx.users else (ctx.key,)
        for method, fn in ctx.methods():
            for call in ctx.super_calls(method, fn):
                name = super_method(call)
                if name is None or name == "__init__":
                    continue
                yield Candidate(
                    lambda c, caller=method.name, call=call, name=name: self._check_call(  # type: ignore[misc]
                        c, concrete, caller, call, name
                    ),
                    _reads(ctx, concrete, name),
                )

    def _check_call(
        self, ctx: ClassContext, concrete: tuple[str, ...], caller: str, call: ast.Call, name: str
    ) -> Finding | None:
        n_pos, keywords, star_args, star_kwargs = call_shape(call)
        for key in concrete:
            target = super_target(ctx, key, name)
            if target is None or target.signature.accepts(n_pos, keywords, star_args, star_kwargs):
                continue
            explicit_self = (
                bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == "self"
            )
            call_text = ", ".join(ast.unparse(a) for a in [*call.args, *call.keywords])
            where = f" in transformers {ctx.target}" if target.upstream else target.release
            if ctx.users:
                where += f" (as combined in `{short_name(key)}`)"
            message = self.message.format(
                method=name,
                call_text=call_text if len(call_text) < 60 else "...",
                call=describe_call(n_pos, keywords),
                owner=target.owner,
                signature=target.signature.text,
                where=where,
                hint="; drop the explicit `self`" if explicit_self else "",
            )
            fix = plan_drop_args(call, name, target.signature) if target.upstream else None
            if fix is not None and drops_loss_count(call, fix):
                fix = replace(fix, unsafe=True)
                message += f"; {LOSS_COUNT_NOTE}"
            return self.report(ctx, call, message, method=caller, fix=fix)
        return None

    def fix_is_valid(self, ctx: ClassContext, edit: Edit) -> bool:  # type: ignore[override]  # a class rule
        """Dropping is valid at a release when the call, as fixed, binds there."""
        if not isinstance(edit, DropArgs):
            return False
        concrete = ctx.users if ctx.users else (ctx.key,)
        for method, fn in ctx.methods():
            for call in ctx.super_calls(method, fn):
                if call.lineno != edit.line or super_method(call) != edit.method:
                    continue
                n_pos, keywords, star_args, star_kwargs = call_shape(call)
                n_pos -= int(edit.drop_self)
                if edit.keep_positional is not None:
                    n_pos = min(n_pos, edit.keep_positional)
                kept = tuple(k for k in keywords if k not in edit.keywords)
                for key in concrete:
                    target = super_target(ctx, key, edit.method)
                    if target is not None and not target.signature.accepts(
                        n_pos, kept, star_args, star_kwargs
                    ):
                        return False
        return True


LOSS_COUNT_NOTE = (
    "dropping `num_items_in_batch` is an unsafe fix: the releases that take it normalise the loss by it"
)


def drops_loss_count(call: ast.Call, edit: DropArgs) -> bool:
    """Whether ``edit`` drops ``num_items_in_batch`` (by keyword or position): the behaviour oracle
    (issue 32) found the fixed gallery ``training_step`` wrapper training with another loss on 4.46.3
    (4.46 normalises the loss by the token count it passes; without it the loss is a plain mean
    divided by the accumulation steps), so that fix is unsafe wherever the range reaches 4.46."""
    dropped = list(edit.keywords)
    positional = [a for a in call.args if not isinstance(a, ast.Starred)][int(edit.drop_self) :]
    if edit.keep_positional is not None:
        dropped += [ast.unparse(a) for a in positional[edit.keep_positional :]]
    return "num_items_in_batch" in dropped


# -- planning the fix (pure ``ast``; the libcst transform is in ``tw302_stale_super_call_fix``)


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
