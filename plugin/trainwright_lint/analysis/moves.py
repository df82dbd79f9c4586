"""Whether moving code out of an override into a callback event is a *proven* move (issue 33, (a)).

A TW2xx finding proposes "move these statements to ``on_X``". That keeps behaviour only when ``on_X``
fires wherever the method runs: on every call path from a public entry point (``train``, ``evaluate``,
``save_model``, ``push_to_hub``, ...) in every release of the target range, and wherever the project
itself calls the method (``trainer.save_model()`` in a script: no event fires around that call).
``trainwright.catalog.events`` holds the paths and the events around each hop, derived from
transformers' source; this module reads them and says yes or no, and why.

On a path that runs the method during evaluation or prediction (``compute_loss`` from
``prediction_step``), the step events never fire; ``on_prediction_step`` (per batch) fires there, and a
callback written for the move implements it as well (``EVALUATION_EQUIVALENTS``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from trainwright.catalog.events import CallPath, ReleaseEvents, load_events

# Paths that start in another transformers module (``trainer_jit_checkpoint``: the SIGTERM checkpoint) run
# only when an argument turns them on (``enable_jit_checkpoint``): they are reported, not required.
_OPT_IN = re.compile(r"^\w+\.")
_EVENT = re.compile(r"\bon_[a-z_]+\b")
STEP_EVENTS = frozenset({"on_step_begin", "on_step_end", "on_substep_end", "on_pre_optimizer_step",
                         "on_optimizer_step", "on_log"})  # fmt: skip
EVALUATION_EQUIVALENTS = ("on_prediction_step",)
# ``evaluation_loop`` runs for ``predict()`` too, where ``on_predict`` fires in place of ``on_evaluate``.
PREDICTION_EQUIVALENTS = {"on_evaluate": "on_predict"}


@dataclass(frozen=True)
class Proof:
    """The verdict: ``events`` the callback implements (the suggested ones, plus the evaluation
    equivalent when a path needs it), or ``missing``: a path on which none of them fires."""

    proven: bool
    events: tuple[str, ...] = ()
    missing: str = ""  # "save_model (called directly) at 5.24.0"


def events_in(text: str) -> tuple[str, ...]:
    """The event names a message names (``on_step_begin -> on_step_end`` -> both)."""
    return tuple(dict.fromkeys(_EVENT.findall(text)))


def _covers(table: ReleaseEvents, method: str, path: CallPath, wanted: set[str]) -> bool:
    if wanted & set(table.inside(method)):
        return True
    before, after = path.near()
    near = set(before) | set(after) | (set(path.hops[-1].around) if path.hops else set())
    return bool(wanted & near)


@cache
def _tables(releases: tuple[str, ...]) -> tuple[ReleaseEvents, ...]:
    return load_events().across(releases)


def prove(method: str, suggested: Sequence[str], releases: Sequence[str], called_directly: bool) -> Proof:
    """Whether the ``suggested`` events cover every path to ``method`` on every release of ``releases``.

    ``called_directly``: the project calls the method itself (not through ``super()``), a path on which
    no event fires unless the method fires it itself. A method the table does not know (defined by TRL
    or the project) has no proven path: no proof."""
    wanted = set(suggested)
    if not wanted or not releases:
        return Proof(False, missing="no event to move to")
    used: list[str] = list(suggested)
    for table in _tables(tuple(releases)):
        if not table.knows(method) or not table.paths(method):
            return Proof(False, missing=f"`{method}` has no known call path at {table.version}")
        if called_directly and not wanted & set(table.inside(method)):
            return Proof(False, missing=f"the project calls `{method}` directly, where no event fires")
        for path in table.paths(method):
            if _OPT_IN.match(path.entry) or _covers(table, method, path, wanted):
                continue
            if wanted & STEP_EVENTS and _covers(table, method, path, set(EVALUATION_EQUIVALENTS)):
                used.extend(e for e in EVALUATION_EQUIVALENTS if e not in used)
                continue
            stand_ins = {PREDICTION_EQUIVALENTS[e] for e in wanted if e in PREDICTION_EQUIVALENTS}
            if stand_ins and _covers(table, method, path, stand_ins):
                used.extend(e for e in sorted(stand_ins) if e not in used)
                continue
            return Proof(False, missing=f"{path.text(method)} at {table.version}")
    return Proof(True, events=tuple(used))


def calls_directly(tree: ast.Module, cls: ast.ClassDef, method: str, events: Sequence[str]) -> bool:
    """The file calls ``method`` of this trainer itself: ``self.method(...)`` inside the class, or
    ``<x>trainer<y>.method(...)`` anywhere (``trainer.save_model()`` in a script), not through
    ``super()``. A call followed, in the same function, by the event fired by hand
    (``self.callback_handler.on_save(...)`` in a loop copy) keeps the event on that path."""
    for fn in _functions(tree, cls):
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method):
                continue
            receiver = node.func.value
            if not isinstance(receiver, ast.Name):
                continue
            ours = receiver.id == "self" and fn in cls.body
            if not (ours or "trainer" in receiver.id.lower()):
                continue
            if not _fires_after(fn, node.lineno, events):
                return True
    return False


def _functions(tree: ast.Module, cls: ast.ClassDef) -> list[ast.AST]:
    """The class's own methods and the module's other functions (a script's ``main``): where a call of
    the trainer's method can be."""
    out: list[ast.AST] = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out += [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out += [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return out


def _fires_after(fn: ast.AST, line: int, events: Sequence[str]) -> bool:
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in events
            and getattr(node, "lineno", 0) >= line
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "callback_handler"
        ):
            return True
    return False
