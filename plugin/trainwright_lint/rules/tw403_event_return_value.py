"""TW403: a callback event returning something other than ``None`` or ``control``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.resolve import CALLBACK
from trainwright_lint.rules._ast import body_nodes, super_call_name
from trainwright_lint.rules._events import is_event_name
from trainwright_lint.rules.base import ClassContext, Example, Rule


def _control_param(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return positional[3] if len(positional) > 3 else "control"


class EventReturnValue(Rule):
    """A callback event returns a value other than `None` or the `control` it received.

    `CallbackHandler.call_event` treats any non-`None` return value as the new `TrainerControl`
    for every following callback and for the training loop: `return True` or `return logs` replaces
    `control` with a bool or a dict, and the loop then fails (or silently stops honouring flags).
    Return nothing, or return `control`.
    """

    FIX = "Return nothing (or the `control` you were given); report values through `logs` or attributes."
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    code = "TW403"
    name = "event-return-value"
    message = "`{method}` returns `{value}`; an event must return None or `{control}` (a non-None value replaces the TrainerControl)"
    roles = frozenset({CALLBACK})

    INVALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    return logs
            """,
            line=5,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_step_end(self, args, state, control, **kwargs):
                    if state.global_step >= 10:
                        control.should_training_stop = True
                    return control

                def on_log(self, args, state, control, logs=None, **kwargs):
                    if not logs:
                        return
                    print(logs)

            class Renamed(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    return super().on_log(args, state, control, logs=logs, **kwargs)
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for fn in ctx.methods():
            if not fn.name.startswith("on_") or not is_event_name(ctx, fn.name):
                continue
            control = _control_param(fn)
            for node in body_nodes(fn):
                if not isinstance(node, ast.Return) or node.value is None:
                    continue
                value = node.value
                if isinstance(value, ast.Constant) and value.value is None:
                    continue
                if isinstance(value, ast.Name) and value.id == control:
                    continue
                if super_call_name(value) == fn.name:
                    continue  # forwards the parent callback's own return value
                shown = ast.unparse(value)
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                yield self.report(
                    ctx,
                    node,
                    self.message.format(method=fn.name, value=shown, control=control),
                    method=fn.name,
                )
