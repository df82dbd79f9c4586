"""What a condition depends on: training progress, time, a metric, the main process, arguments.

A statement gated on the global step, the epoch, an accumulation boundary, the clock or an
evaluation metric happens at a *moment* of the loop; that moment is what callback events are for.
Conditions on the main process or on ``args`` say *where* or *whether*, not when: they are recorded
but do not make logic callback-worthy on their own.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from trainwright_lint.analysis.kinds import CLOCK_CALLS
from trainwright_lint.syntax import dotted_name, walk_expression

STEP = "the global step"
EPOCH = "the epoch"
ACCUMULATION = "the accumulation boundary"
TIME = "wall-clock time"
METRIC = "a metric"
MAIN_PROCESS = "the main process"
ARGS = "training arguments"

PROGRESS = frozenset({STEP, EPOCH, ACCUMULATION, TIME, METRIC})

_MAIN = frozenset({"is_main_process", "is_world_process_zero", "is_local_process_zero", "process_index",
                   "local_process_index", "local_rank"})  # fmt: skip
_METRIC_WORDS = ("best_metric", "eval_loss", "metric_for_best_model", "best_model_checkpoint")
_ACCUMULATION_ATTRS = frozenset({"gradient_accumulation_steps", "current_gradient_accumulation_steps"})
_STEP_NAMES = frozenset({"global_step", "step", "steps", "total_steps", "completed_steps", "max_steps"})


def _is_metric_attribute(attr: str) -> bool:
    """``self.best_metric``, ``state.eval_metrics``: a metric value. ``self.compute_metrics`` is the
    function that computes them, so ``if self.compute_metrics is not None`` is configuration, not a
    moment of the loop (the transformers examples' QA trainers gate their ``self.log`` on it)."""
    if attr.startswith("compute_"):
        return False
    return attr in _METRIC_WORDS or attr.startswith("best_") or attr.endswith(("metric", "metrics"))


def is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = dotted_name(node.func)
    return name is not None and (name in CLOCK_CALLS or name.endswith((".perf_counter", ".monotonic")))


def gate_kinds(test: ast.AST, clocks: Collection[str] = (), counters: Collection[str] = ()) -> frozenset[str]:
    """Everything ``test`` depends on among the kinds above.

    ``clocks``: names and ``self.x`` attributes that hold a time read (``t0``, ``self.start``);
    ``counters``: ``self.x`` attributes the class increments per call (a hand-made step counter).
    """
    found: set[str] = set()
    for node in walk_expression(test):
        if isinstance(node, ast.Attribute):
            attr = node.attr
            if attr in ("global_step", "max_steps"):
                found.add(STEP)
            elif attr == "epoch":
                found.add(EPOCH)
            elif attr == "sync_gradients":
                found.add(ACCUMULATION)
            elif attr in _MAIN:
                found.add(MAIN_PROCESS)
            elif _is_metric_attribute(attr):
                found.add(METRIC)
            owner = dotted_name(node)
            if owner is not None:
                if owner in clocks:
                    found.add(TIME)
                if owner.startswith(("self.args.", "args.")):
                    found.add(ARGS)
                if owner.startswith("self.") and attr in counters:
                    found.add(STEP)
        elif isinstance(node, ast.Name):
            if node.id in clocks:
                found.add(TIME)
            elif node.id in _STEP_NAMES:
                found.add(STEP)
            elif node.id in ("epoch", "epochs"):
                found.add(EPOCH)
            elif node.id in ("metrics", "eval_metrics", "eval_results", "eval_result"):
                found.add(METRIC)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            if any(
                isinstance(n, ast.Attribute) and n.attr in _ACCUMULATION_ATTRS
                for n in walk_expression(node.right)
            ):
                found.add(ACCUMULATION)
        elif isinstance(node, ast.Call):
            if is_clock_call(node):
                found.add(TIME)
        elif isinstance(node, ast.Subscript):
            for key in ast.walk(node.slice):
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and ("loss" in key.value or key.value.startswith(("eval_", "best_")))
                ):
                    found.add(METRIC)
    return frozenset(found)
