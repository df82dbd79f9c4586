"""TW203: a Trainer subclass sets ``self.control.should_*``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.analysis.effects import MethodEffects
from trainwright_lint.analysis.facts import METHODS, OBSERVATION
from trainwright_lint.analysis.gates import METRIC, TIME, gate_kinds
from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import reference
from trainwright_lint.rules.base import EVERY_RELEASE, MOVE_STATEMENTS, ClassContext, Example, Rule
from trainwright_lint.syntax import dotted_name

_EVENT_FOR_FLAG = {
    "should_training_stop": "`on_step_end` or `on_evaluate`",
    "should_epoch_stop": "`on_step_end`",
    "should_save": "`on_step_end` (per step) or `on_evaluate` (after a good evaluation)",
    "should_evaluate": "`on_step_end` or `on_epoch_end`",
    "should_log": "`on_step_end`",
}


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

    USE_INSTEAD = """
        from transformers import Trainer
        from trainwright.callbacks import LossGuardCallback

        trainer = Trainer(model=model, args=args, callbacks=[LossGuardCallback()])  # stops on a NaN loss
    """

    release_facts = EVERY_RELEASE
    suggestion = MOVE_STATEMENTS
    preview = True  # test split: 0 of 1 finding right (docs/lint-accuracy.md)
    code = "TW203"
    FACTS = (
        METHODS,
        OBSERVATION,
    )
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
        for method, fn in ctx.methods():
            if "control" not in ctx.unit.text(method.line, method.end_line):
                continue
            obs = ctx.observation(method, fn)
            if not obs.controls or obs.effects is None:
                continue
            tests = _enclosing_tests(obs.effects)
            for node in obs.controls:
                flag = _flag(node)
                if flag is None:
                    continue
                test = tests.get(id(node))
                callback = "ControlScheduleCallback"
                if test is not None:
                    text = ast.unparse(test).lower()
                    gates = gate_kinds(test)
                    if TIME in gates:
                        callback = "WallClockBudgetCallback"
                    elif any(w in text for w in ("loss", "nan", "isfinite", "inf")) and METRIC not in gates:
                        callback = "LossGuardCallback"
                message = self.message.format(
                    method=method.name,
                    flag=flag,
                    # a `log` override reacts to a log line: `on_log` sees the same `logs`
                    event="`on_log`" if method.name == "log" else _EVENT_FOR_FLAG.get(flag, "`on_step_end`"),
                    ref=reference(callback),
                )
                yield self.report(ctx, node, message, method=method.name)


def _flag(node: ast.stmt) -> str | None:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    for t in targets:
        name = dotted_name(t) if isinstance(t, ast.Attribute) else None
        if name and name.startswith("self.control.should_"):
            return name.rsplit(".", 1)[-1]
    return None


def _enclosing_tests(effects: MethodEffects) -> dict[int, ast.expr]:
    """The innermost ``if`` test around each statement (by node identity)."""
    out: dict[int, ast.expr] = {}
    for s in effects.statements:
        parent = s.parent
        while parent != -1:
            node = effects.statements[parent].node
            if isinstance(node, (ast.If, ast.While)):
                out[id(s.node)] = node.test
                break
            parent = effects.statements[parent].parent
    return out
