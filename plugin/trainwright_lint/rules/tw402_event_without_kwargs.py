"""TW402: a callback event method without ``**kwargs``."""

from __future__ import annotations

from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.project.model import CALLBACK
from trainwright_lint.rules._events import is_event_name
from trainwright_lint.rules._fix_plans import plan_var_keyword
from trainwright_lint.rules.base import SAFE, ClassContext, Example, Rule


class EventWithoutKwargs(Rule):
    """A callback event method does not accept `**kwargs`.

    `CallbackHandler.call_event` always calls `callback.on_x(args, state, control, **kwargs)` with
    `model`, `processing_class`, `optimizer`, `lr_scheduler`, `train_dataloader` and
    `eval_dataloader` (plus `logs` or `metrics` for some events), so a method without `**kwargs`
    fails with `TypeError: ... got an unexpected keyword argument 'model'` the first time it fires.
    """

    FIX = 'Add `**kwargs` to the event method and read what you need from it (`kwargs["model"]`).'
    EVIDENCE = ("https://github.com/huggingface/transformers/issues/9603",)

    code = "TW402"
    name = "event-without-kwargs"
    message = "`{method}` has no `**kwargs` but the Trainer passes {kwargs}; add `**kwargs`"
    roles = frozenset({CALLBACK})
    fix_applicability = SAFE

    INVALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None):
                    print(logs)
            """,
            line=4,
            fixed="""
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    print(logs)
            """,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    print(logs)
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for _method, fn in ctx.methods():
            if not fn.name.startswith("on_") or fn.args.kwarg is not None or not is_event_name(ctx, fn.name):
                continue
            event = ctx.view.events.get(fn.name) if ctx.view is not None else None
            if event is None and ctx.catalog is not None:
                event = ctx.catalog.event_history(fn.name)
            accepted = {a.arg for a in (*fn.args.args, *fn.args.kwonlyargs)}
            passed = [k for k in (event.kwargs if event else ("model",)) if k not in accepted]
            if not passed:
                continue
            shown = ", ".join(f"`{k}=`" for k in passed[:4]) + (", ..." if len(passed) > 4 else "")
            message = self.message.format(method=fn.name, kwargs=shown)
            yield self.report(ctx, fn, message, method=fn.name, fix=plan_var_keyword(fn))
