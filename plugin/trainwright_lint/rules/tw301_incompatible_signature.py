"""TW301: an override that cannot accept the arguments the Trainer passes to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainwright_lint.finding import Finding
from trainwright_lint.rules._ast import decorator_names, signature_of
from trainwright_lint.rules.base import ClassContext, Example, FunctionNode, Rule


def describe_call(n_positional: int, keywords: tuple[str, ...]) -> str:
    parts = [f"{n_positional} positional argument{'s' if n_positional != 1 else ''}"]
    if keywords:
        parts.append(
            "keyword" + ("s " if len(keywords) > 1 else " ") + ", ".join(f"`{k}=`" for k in keywords)
        )
    return " + ".join(parts)


class IncompatibleSignature(Rule):
    """An override's parameters cannot bind the arguments the target Trainer passes at its own call
    sites, so training fails with a `TypeError` the first time the loop calls it.

    Examples from real breakages: `compute_loss` without `num_items_in_batch` (called with it since
    4.46), `training_step(self, model, inputs)` (3 arguments since 4.46), `log(self, logs)` (called
    with `start_time` since 4.47), `_get_train_sampler(self)` (called with the dataset since 4.52),
    `get_batch_samples` without `device` (4.50), `create_optimizer(self)` (called with the model on
    FSDP paths since 5.3).

    A `*args, **kwargs` pass-through is compatible with every release. Call sites inside methods your
    class (or its project base classes) overrides itself are ignored: your code calls it there.
    """

    FIX = (
        "Add the parameters the base signature has (with their defaults) and pass them on to `super()`, "
        "or accept `*args, **kwargs` and forward them."
    )
    EVIDENCE = (
        "https://github.com/huggingface/transformers/issues/36331",
        "https://github.com/huggingface/trl/issues/2445",
        "https://github.com/hiyouga/LlamaFactory/issues/8491",
        "https://github.com/unslothai/unsloth/pull/10887",
    )

    code = "TW301"
    name = "incompatible-signature"
    message = (
        "`{method}{signature}` cannot accept what transformers {version} passes from `{caller}` "
        "({call}); the base signature is `{base}`: add the missing parameters or `**kwargs`"
    )

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False):
                    return super().compute_loss(model, inputs, return_outputs)
            """,
            line=4,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def log(self, logs):
                    super().log(logs)
            """,
            line=4,
        ),
        Example(
            """
            from transformers import Seq2SeqTrainer

            class MyTrainer(Seq2SeqTrainer):
                def _get_train_sampler(self):
                    return None
            """,
            version="4.52.0",
            line=4,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, *args, **kwargs):
                    return super().compute_loss(*args, **kwargs)

                def log(self, logs, *args, **kwargs):
                    super().log(logs, *args, **kwargs)
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _get_train_sampler(self):
                    return None
            """,
            version="4.51.3",
        ),
    )

    library_message = (
        "`{method}{signature}` cannot accept what {owner} passes from `{caller}` ({call}); "
        "its signature there is `{base}`: add the missing parameters or `**kwargs`"
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        if ctx.catalog_cls is None:
            return
        overridden = ctx.own_method_names() | ctx.project_methods
        for fn in ctx.methods():
            finding = self._library_check(ctx, fn, overridden)
            if finding is not None:
                yield finding
                continue
            info = ctx.trainer_method(fn.name)
            site = _first_incompatible_call(fn, info, overridden)
            if info is not None and site is not None:
                message = self.message.format(
                    method=fn.name,
                    signature=signature_of(fn).text,
                    version=ctx.target,
                    caller=site.caller,
                    call=describe_call(site.n_positional, site.keywords),
                    base=info.signature.text,
                )
                yield self.report(ctx, fn, message, method=fn.name)

    def _library_check(self, ctx: ClassContext, fn: FunctionNode, overridden: set[str]) -> Finding | None:
        """Call sites inside the third-party trainer (TRL) of a method it defines itself."""
        info = ctx.library_method(fn.name)
        site = _first_incompatible_call(fn, info, overridden)
        if info is None or site is None:
            return None
        message = self.library_message.format(
            method=fn.name,
            signature=signature_of(fn).text,
            owner=ctx.library_label,
            caller=site.caller,
            call=describe_call(site.n_positional, site.keywords),
            base=info.signature.text,
        )
        return self.report(ctx, fn, message, method=fn.name)


def _first_incompatible_call(fn: FunctionNode, info: Any, overridden: set[str]) -> Any:
    """The first call site of the library's method that the override ``fn`` cannot bind, or None.

    Call sites inside methods the project overrides too are skipped: that caller no longer runs.
    Properties and dunders are not called with arguments the way methods are.
    """
    if info is None or info.kind == "property" or fn.name.startswith("__") or "property" in decorator_names(fn):
        return None
    signature = signature_of(fn)
    for site in info.call_sites:
        if site.caller in overridden:
            continue
        if not signature.accepts(site.n_positional, site.keywords, site.star_args, site.star_kwargs):
            return site
    return None
