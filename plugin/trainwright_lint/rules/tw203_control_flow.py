"""TW203: a Trainer subclass sets ``self.control.should_*``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import reference
from trainwright_lint.rules._ast import body_nodes, condition_kind, dotted_name, time_names, walk_body
from trainwright_lint.rules.base import ClassContext, Example, Rule

_EVENT_FOR_FLAG = {
    "should_training_stop": "`on_step_end` or `on_evaluate`",
    "should_epoch_stop": "`on_step_end`",
    "should_save": "`on_step_end` (per step) or `on_evaluate` (after a good evaluation)",
    "should_evaluate": "`on_step_end` or `on_epoch_end`",
    "should_log": "`on_step_end`",
}


def _assigns_control(fn: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Store)
        and n.attr.startswith("should_")
        and (dotted_name(n.value) or "") == "self.control"
        for n in body_nodes(fn)  # type: ignore[arg-type]
    )


def _driven_by_arguments(test: ast.AST) -> bool:
    """A condition on ``self.args.<x>`` reproduces a TrainingArguments-driven decision of the loop."""
    return any(
        isinstance(n, ast.Attribute) and (dotted_name(n) or "").startswith("self.args.")
        for n in ast.walk(test)
    )


class ControlFlowInSubclass(Rule):
    """A Trainer subclass decides *when* to stop, save, evaluate or log by assigning
    `self.control.should_*` inside a method.

    `TrainerControl` is the callback API: every event receives `control` and the flags are consumed
    and reset at documented points (e.g. `should_save` is read after `on_step_end` and reset by
    `on_step_begin` and `on_save`). Setting them from an overridden method depends on where that
    method happens to run in the loop of your transformers release. Do it in a callback on
    `on_step_end` or `on_evaluate` (see trainwright's `ControlScheduleCallback`,
    `WallClockBudgetCallback` and `LossGuardCallback`).
    """

    FIX = (
        "Set the `control` flag from a `TrainerCallback` on the event the message names and return `control`."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    code = "TW203"
    name = "control-flow-in-subclass"
    message = "`{method}` sets `control.{flag}` in the Trainer subclass; set it from a TrainerCallback on {event} instead{ref}"

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    if loss.isnan():
                        self.control.should_training_stop = True
                    return loss
            """,
            line=7,
        ),
        Example(
            """
            import time
            from transformers import Trainer

            class BudgetTrainer(Trainer):
                def log(self, logs, start_time=None):
                    super().log(logs, start_time)
                    if time.time() - self.t0 > 3600:
                        self.control.should_save = True
                        self.control.should_training_stop = True
            """,
            line=8,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class CopiedLoop(Trainer):
                def _maybe_log_save_evaluate(self, *args, **kwargs):
                    metrics = self._evaluate(*args[3:5])
                    if self.args.save_strategy == "best":  # transformers' own logic, copied
                        self.control.should_save = self._determine_best_metric(metrics=metrics, trial=args[3])
            """
        ),
        Example(
            """
            from transformers import TrainerCallback

            class StopOnNan(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    if logs and logs.get("loss") != logs.get("loss"):
                        control.should_training_stop = True
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for fn in ctx.methods():
            if not _assigns_control(fn):
                continue
            clocks = time_names(fn)
            conditions = {}
            for node in body_nodes(fn):
                if isinstance(node, ast.If):
                    for sub in walk_body(node.body + node.orelse):
                        conditions[id(sub)] = node.test  # innermost wins (visited last)
            for node in body_nodes(fn):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                    else []
                )
                for target in targets:
                    name = dotted_name(target) if isinstance(target, ast.Attribute) else None
                    if not name or not name.startswith("self.control.should_"):
                        continue
                    flag = name.rsplit(".", 1)[-1]
                    test = conditions.get(id(node))
                    if test is not None and _driven_by_arguments(test):
                        continue  # e.g. save_strategy == "best": the Trainer's own bookkeeping, copied
                    callback = "ControlScheduleCallback"
                    if test is not None:
                        text = ast.unparse(test).lower()
                        if condition_kind(test, clocks) == "wall-clock":
                            callback = "WallClockBudgetCallback"
                        elif any(w in text for w in ("loss", "nan", "isfinite", "inf")):
                            callback = "LossGuardCallback"
                    message = self.message.format(
                        method=fn.name,
                        flag=flag,
                        # a `log` override reacts to a log line: `on_log` sees the same `logs`
                        event="`on_log`" if fn.name == "log" else _EVENT_FOR_FLAG.get(flag, "`on_step_end`"),
                        ref=reference(callback),
                    )
                    yield self.report(ctx, node, message, method=fn.name)
