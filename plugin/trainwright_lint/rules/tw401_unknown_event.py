"""TW401: a callback method named like an event that the target release never fires."""

from __future__ import annotations

from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.resolve import CALLBACK
from trainwright_lint.rules._events import closest_event
from trainwright_lint.rules.base import ClassContext, Example, Rule


class UnknownEvent(Rule):
    """A `TrainerCallback` subclass defines an `on_*` method that is not an event of the target
    transformers release, so it is never called: `on_batch_end`, `on_evaluate_begin`,
    `on_save_begin` never existed; `on_pre_optimizer_step` needs 4.45+, `on_push_begin` 5.0+.

    The message suggests the closest real event. Methods your own code calls (`self.on_custom()`) or
    that a project base callback defines are not reported.
    """

    FIX = (
        "Rename the method to the real event the message suggests (check when that event fires), or call "
        "it yourself if it is a helper."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    code = "TW401"
    name = "unknown-event"
    message = "`{method}` {why}, so it is never called{suggestion}"
    roles = frozenset({CALLBACK})

    INVALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_batch_end(self, args, state, control, **kwargs):
                    print(state.global_step)
            """,
            line=4,
        ),
        Example(
            """
            from transformers import TrainerCallback

            class GradCallback(TrainerCallback):
                def on_pre_optimizer_step(self, args, state, control, **kwargs):
                    pass
            """,
            version="4.44.2",
            line=4,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_step_end(self, args, state, control, **kwargs):
                    self.on_custom_hook(state)

                def on_custom_hook(self, state):  # our own helper, called above
                    pass
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        if ctx.view is None or ctx.catalog is None:
            return
        events = ctx.view.events
        called = ctx.module.called_attributes()
        for fn in ctx.methods():
            name = fn.name
            if not name.startswith("on_") or name in events or name in called or name in ctx.project_methods:
                continue
            history = ctx.catalog.event_history(name)
            if history is not None:
                why = f"is not an event in transformers {ctx.target} (fires from {history.since}" + (
                    f" to {history.until})" if history.until else ")"
                )
                suggestion = f"; upgrade transformers or move the code to `{closest_event(ctx, name) or 'on_step_end'}`"
            else:
                why = f"is not a TrainerCallback event (transformers {ctx.target})"
                close = closest_event(ctx, name)
                suggestion = f"; did you mean `{close}`?" if close else f"; events are: {', '.join(events)}"
            yield self.report(
                ctx, fn, self.message.format(method=name, why=why, suggestion=suggestion), method=name
            )
