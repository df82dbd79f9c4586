"""TW302: a ``super().m(...)`` call the target Trainer's ``m`` cannot accept."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.rules._ast import body_nodes, call_shape, super_call_name
from trainwright_lint.rules.base import ClassContext, Example, Rule
from trainwright_lint.rules.tw301_incompatible_signature import describe_call


class StaleSuperCall(Rule):
    """A `super().m(...)` call passes arguments that the target release's `Trainer.m` does not
    accept: `super()._save_checkpoint(model, trial, metrics=metrics)` on 4.47+ (where `metrics` was
    removed), `super().compute_loss(..., num_items_in_batch=n)` before 4.46, or an explicit `self`
    inside the super call (`super().m(self, ...)`).

    Checked only when the call reaches transformers' own method: if one of your project's base
    classes, or a third-party trainer such as TRL's, defines `m` in between, its signature applies
    and is not in the catalogue.
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
    name = "stale-super-call"
    message = "`super().{method}({call_text})` passes {call} but `Trainer.{method}{signature}` in transformers {version} cannot accept it{hint}"

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial, metrics=None):
                    super()._save_checkpoint(model, trial, metrics=metrics)
            """,
            line=5,
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
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        if ctx.catalog_cls is None or ctx.third_party:
            return
        for fn in ctx.methods():
            for node in body_nodes(fn):
                name = super_call_name(node)
                if name is None or name in ctx.project_methods:
                    continue
                info = ctx.trainer_method(name)
                if info is None or info.kind != "method":
                    continue
                assert isinstance(node, ast.Call)
                n_pos, keywords, star_args, star_kwargs = call_shape(node)
                if info.signature.accepts(n_pos, keywords, star_args, star_kwargs):
                    continue
                explicit_self = (
                    bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "self"
                )
                hint = "; drop the explicit `self`" if explicit_self else ""
                call_text = ", ".join(ast.unparse(a) for a in node.args + node.keywords)  # type: ignore[operator]
                message = self.message.format(
                    method=name,
                    call_text=call_text if len(call_text) < 60 else "...",
                    call=describe_call(n_pos, keywords),
                    signature=info.signature.text,
                    version=ctx.target,
                    hint=hint,
                )
                yield self.report(ctx, node, message, method=fn.name)
