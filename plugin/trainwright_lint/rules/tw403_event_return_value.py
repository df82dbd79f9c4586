"""TW403: a callback event returning something other than ``None`` or ``control``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.analysis.facts import METHODS, STATEMENTS
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import CALLBACK
from trainwright_lint.rules._events import is_event_name
from trainwright_lint.rules.base import CALLBACK_EVENTS, Candidate, ClassContext, Example, Rule
from trainwright_lint.syntax import dotted_name, super_method


def _copies(value: ast.AST, control: str) -> bool:
    """``copy.deepcopy(control)`` / ``copy(control)``."""
    return (
        isinstance(value, ast.Call)
        and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in ("copy", "deepcopy")
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == control
    )


def _control_copies(statements: list[ast.stmt], control: str) -> set[str]:
    """Locals assigned a copy of ``control`` (``control_copy = deepcopy(control)``)."""
    out = set()
    for node in statements:
        if isinstance(node, ast.Assign) and _copies(node.value, control):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


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

    USE_INSTEAD = """
        from transformers import TrainerCallback

        class StopAfterTen(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                if state.global_step >= 10:
                    control.should_training_stop = True
                return control
    """

    code = "TW403"
    release_facts = CALLBACK_EVENTS
    FACTS = (
        METHODS,
        STATEMENTS,
    )
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

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        # Whether a method is an event counts every catalogued release (``is_event_name``): the
        # judgement does not depend on the release, so each candidate is judged once.
        for method, fn in ctx.methods():
            if not fn.name.startswith("on_"):
                continue
            for node, shown, control in _bad_returns(fn, ctx.statements(method, fn)):
                yield Candidate(
                    lambda c, fn=fn, node=node, shown=shown, control=control: self._judge(  # type: ignore[misc]
                        c, fn, node, shown, control
                    )
                )

    def _judge(
        self,
        ctx: ClassContext,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        node: ast.Return,
        shown: str,
        control: str,
    ) -> Finding | None:
        if not is_event_name(ctx, fn.name):
            return None
        return self.report(
            ctx, node, self.message.format(method=fn.name, value=shown, control=control), method=fn.name
        )


def _bad_returns(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, statements: list[ast.stmt]
) -> list[tuple[ast.Return, str, str]]:
    """(return, its value as shown, the control parameter) of each ``return`` of the event's own
    ``statements`` whose value is not None, the control object, a copy of it or the parent
    callback's own return value."""
    control = _control_param(fn)
    copies = _control_copies(statements, control)
    out = []
    for node in statements:
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if isinstance(value, ast.Name) and (value.id == control or value.id in copies):
            continue
        if _copies(value, control):
            continue  # copy.deepcopy(control): a TrainerControl all the same
        if super_method(value) == fn.name:
            continue  # forwards the parent callback's own return value
        shown = ast.unparse(value)
        out.append((node, shown if len(shown) <= 40 else shown[:37] + "...", control))
    return out
