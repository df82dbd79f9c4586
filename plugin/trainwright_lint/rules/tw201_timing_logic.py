"""TW201: step/epoch/wall-clock gated side effects inside a Trainer override."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import event_for_effects
from trainwright_lint.rules._ast import (
    NOOP,
    body_nodes,
    condition_kind,
    dotted_name,
    side_effect_kinds,
    time_names,
)
from trainwright_lint.rules.base import ClassContext, Example, Rule


def _outside_reads(fn: ast.AST, block: ast.If) -> set[str]:
    inside = {id(n) for n in ast.walk(block)}
    return {
        n.id
        for n in body_nodes(fn)  # type: ignore[arg-type]
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside
    }


class TimingLogic(Rule):
    """An override of a Trainer method adds behaviour gated by training progress or the clock —
    `if self.state.global_step % 100 == 0:`, `if self.state.epoch >= 2:`, `if time.time() - t0 > 60:` —
    and the gated code only has side effects: logging, printing, writing files, generating samples,
    `gc.collect()`/`torch.cuda.empty_cache()`, recording metrics, or setting attributes for later.

    That is exactly what `TrainerCallback` events are for: they fire at a defined point of every step,
    epoch, log or save, see `state` and `args`, and keep the Trainer subclass about *what* is computed.
    The message names the event (and a trainwright reference callback when one fits).

    Not flagged: gated code that changes what the method computes or returns (modifies the loss, the
    inputs or a local that is used later, returns early, calls something we cannot classify), code
    driven by `self.args.torch_empty_cache_steps` (transformers' own cadence, kept by copies of
    `training_step`), `log` overrides that merge metrics into `logs` (they are legitimate as a whole,
    including gated completion tables drawn from the trainer's own buffers), dunder methods, and
    methods that are not Trainer methods.
    """

    FIX = (
        "Move the gated code to the callback event the message names and register the callback with "
        "`Trainer(callbacks=[...])` or `trainer.add_callback(...)`; keep in the override only what "
        "changes the computed result."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    code = "TW201"
    name = "timing-logic-in-override"
    message = "`{method}` runs {effects} gated on {condition} inside the override; move it to a TrainerCallback on {event}"

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    if self.state.global_step % 100 == 0:
                        print(f"step {self.state.global_step}: {loss.item()}")
                    return loss
            """,
            line=6,
        ),
        Example(
            """
            import gc, torch
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    if self.state.global_step % 50 == 0:
                        gc.collect()
                        torch.cuda.empty_cache()
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
            line=6,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    out = super().training_step(model, inputs, num_items_in_batch)
                    if self.state.epoch is not None and self.state.epoch >= 1:
                        self.sample_texts = self.generate_samples(model)
                    return out
            """,
            line=6,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
                    if self.state.global_step > 1000:
                        loss = loss * 0.5  # changes what is computed: a legitimate override
                    return loss
            """
        ),
        Example(
            """
            import torch
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    if (self.args.torch_empty_cache_steps is not None
                            and self.state.global_step % self.args.torch_empty_cache_steps == 0):
                        torch.cuda.empty_cache()
                    return loss
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def log(self, logs, start_time=None):
                    logs.update(self._extra_metrics)  # merging metrics gathered in compute_loss
                    self._extra_metrics.clear()
                    super().log(logs, start_time)
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for fn in ctx.methods():
            if fn.name.startswith("__") or not ctx.ever_trainer_method(fn.name):
                continue  # dunders (__init__) are not loop hooks
            if fn.name == "log" and _merges_logs(fn):
                continue  # log overrides that merge metrics gathered during the loss are legitimate
            clocks = time_names(fn)
            reported: set[int] = set()
            for node in body_nodes(fn):
                if not isinstance(node, ast.If) or id(node) in reported:
                    continue
                condition = condition_kind(node.test, clocks)
                if condition is None or _uses_argument_cadence(node.test):
                    continue
                kinds = side_effect_kinds(node.body + node.orelse, _outside_reads(fn, node))
                if not kinds or kinds == {NOOP}:
                    continue
                reported.update(id(n) for n in ast.walk(node))
                effects = ", ".join(sorted(k for k in kinds if k != NOOP))
                message = self.message.format(
                    method=fn.name,
                    effects=effects,
                    condition=_CONDITION_TEXT[condition],
                    event=event_for_effects(kinds, condition),
                )
                yield self.report(ctx, node, message, method=fn.name)


_CONDITION_TEXT = {"step": "the global step", "epoch": "the epoch", "wall-clock": "wall-clock time"}


def _merges_logs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``logs.update(...)``, ``logs[k] = ...`` or ``logs = {**logs, ...}`` on the first parameter."""
    params = [a.arg for a in fn.args.args[1:2]]
    if not params:
        return False
    logs = params[0]

    def is_logs(expr: ast.AST) -> bool:
        return isinstance(expr, ast.Name) and expr.id == logs

    for node in body_nodes(fn):
        merged = (
            (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("update", "setdefault")
                and is_logs(node.func.value)
            )
            or (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and is_logs(node.value))
            or (isinstance(node, ast.Assign) and any(is_logs(t) for t in node.targets))
        )
        if merged:
            return True
    return False


def _uses_argument_cadence(test: ast.AST) -> bool:
    """Conditions on ``self.args.torch_empty_cache_steps`` reproduce transformers' own behaviour."""
    for sub in ast.walk(test):
        name = dotted_name(sub) if isinstance(sub, ast.Attribute) else None
        if name and name.endswith("args.torch_empty_cache_steps"):
            return True
    return False
