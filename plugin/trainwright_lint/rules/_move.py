"""The move a TW201/TW202 finding proposes, as an unsafe fix: the planner (lint side, ``ast`` only).

The edit says which statements of which override move, to which event(s), and how the callback is
registered; ``rules/_move_cst.py`` writes it with libcst:

- a ``TrainerCallback`` class beside the trainer class, holding the trainer (``self.trainer``), whose
  event method runs the moved statements with ``self`` read as the trainer; statements before the
  ``super()`` call go to the first event (``on_step_begin``), those after it to the last
  (``on_step_end``); a local that crosses from one to the other is kept on the callback; code of a
  per-micro-batch method (``training_step``) goes where it sees the same step state once per
  micro-batch (``PER_MICRO_BATCH`` below), so that the moved program trains the same (the oracle:
  ``scripts/move_oracle.py``);
- the moved statements removed from the override, and the override itself removed when what is left is
  ``return super().m(...)`` with its own arguments;
- ``self.add_callback(...)`` at the end of the trainer's ``__init__`` (one is added when it has none).

Unsafe: the code runs at the event instead of inside the method (once per optimizer step rather than
per micro-batch, after the checkpoint rather than before it). A move is planned only when it is
mechanical: the statements read no result of the ``super()`` call, no argument that neither an event
receives (``KWARGS``) nor the Trainer holds on every proven path (``HELD``: ``_save_checkpoint``'s
``trial``), no local but one computed without effects (an assignment, or an ``if``/``else`` of
assignments, recomputed in the callback), no attribute that code left behind sets after them (a
micro-batch counter set before the accumulation check moves; one set after it does not), no code left
behind runs between two of them on one side of the call, and the class is defined at module level.

Refused on the dev split, each for a reason of transformers' call paths (issue 33): sample generation
in ``evaluation_loop`` (its own RNG draws, model calls and ``self.log`` run before the loop; no event
fires there, and ``on_evaluate`` would log after the metrics); ``evaluate`` code reading the returned
metrics (``on_evaluate`` gets the same dict, but before the memory metrics are added, and not the merged
dict of several eval datasets); a timer around work the override keeps; code reading a result or a
parameter no event has; a re-implementation with no ``super()`` call.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import NamedTuple, TypedDict
from weakref import WeakKeyDictionary

from trainwright_lint.analysis import kinds as K
from trainwright_lint.analysis.effects import COMPOUND, EVENT_AT_RETURN, OWN_EVENTS, MethodEffects
from trainwright_lint.analysis.moves import STEP_EVENTS
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.edits import Edit
from trainwright_lint.rules._reimplemented import stand_in, whole_branches
from trainwright_lint.rules.base import ClassContext
from trainwright_lint.syntax import FunctionNode, dotted_name, is_docstring, param_names

# Methods ``_run_epoch`` calls once per micro-batch, between ``on_step_begin`` (before the first
# micro-batch of a step) and ``on_substep_end`` (after each micro-batch but the last) / ``on_step_end``
# (after the last one, once ``global_step`` and ``epoch`` have advanced): the events table's hops
# (``tests/lint/test_move_fix.py`` checks it). Code before the call that reads no result of the
# micro-batch sees the same step state at ``on_step_begin`` and at each ``on_substep_end``, and those fire
# once per micro-batch together, so the move runs it there (code after the call: ``AFTER_MICRO_BATCH``);
# at ``on_step_end`` it would see the next step's number (and run once per optimiser step), at
# ``on_log``/``on_save`` other steps.
#
# Code around the ``super()`` call (a timer) is split the same way: its first half runs at the event
# right before each micro-batch (``on_step_begin``, then ``on_substep_end`` of the previous one), its
# second half at the event right after it (``on_substep_end``, and ``on_pre_optimizer_step`` after the
# last one, before the optimiser step): the span is the micro-batch's, plus the gradient clipping.
PER_MICRO_BATCH = frozenset({"training_step"})
# Methods ``training_step`` calls once per micro-batch, and ``prediction_step`` once per evaluation batch:
# their code runs per micro-batch as ``training_step``'s does, and during evaluation at
# ``on_prediction_step``, which fires after each batch with the same step.
INSIDE_MICRO_BATCH = frozenset({"compute_loss", "_prepare_inputs", "compute_loss_context_manager"})
MICRO_BATCH_EVENTS = ("on_step_begin", "on_substep_end")
MICRO_BATCH_SPAN = (
    ("on_step_begin", "before"),
    ("on_substep_end", "after,before"),
    ("on_pre_optimizer_step", "after"),
)
# Code only after ``super().training_step()`` runs at the span's second half: right after each micro-batch,
# before the optimiser step, with the step's number, the model still in ``train()`` mode. Placed before
# the next micro-batch (``MICRO_BATCH_EVENTS``) it ran one micro-batch early: a print of the gradients saw
# those of the micro-batch before (zero at ``on_step_begin``), and after an evaluation a print of
# ``model.training`` said ``False`` (``tests/oracle/moves/train_mode_print_after_training_step.py``; the
# refused gradient print: ``tests/oracle/refused/grad_print_after_training_step.py``).
AFTER_MICRO_BATCH = tuple((event, "after") for event, sides in MICRO_BATCH_SPAN if "after" in sides)
# ...except code reading the gradients: at the last micro-batch of a step the Trainer clips them
# (``max_grad_norm``) before ``on_pre_optimizer_step``, and no event fires between the backward and the clip.
_READS_GRADIENTS = re.compile(r"\.grad\b")
# Releases of the range without ``on_pre_optimizer_step`` (before 4.45): no event fires between the
# last backward and the optimiser step, so there the span's second half runs at ``on_optimizer_step``,
# after the step, guarded to run only where the pre-step event does not exist; the fix says so. Written
# without that fallback, the last micro-batch of each step went untimed on those releases, and the
# TW401 fix of the same ``fix --unsafe-fixes`` run renamed the handler to ``on_optimizer_step``, which
# moved the span on every release (issue 33's oracle run).
SPAN_END, SPAN_FALLBACK = "on_pre_optimizer_step", "on_optimizer_step"
# Methods the training loop calls only when ``_maybe_log_save_evaluate`` finds a control flag set: a step
# event fires on every step, so code run before them cannot move there unguarded.
RUNS_ONLY_WHEN = {
    "evaluate": "should_evaluate",
    "_evaluate": "should_evaluate",
    "evaluation_loop": "should_evaluate",
    "_save_checkpoint": "should_save",
}

# What a move cannot keep is named where the user reads it (``MoveToCallback.differs``: the finding's note
# and the callback's docstring).
# ``metrics = super().evaluate(...)`` read after the call: ``on_evaluate`` receives that dict (the same object,
# returned after it), so the code can read it there, except in two cases the move names: a dict of eval
# datasets, for which ``Trainer.evaluate`` calls ``self.evaluate`` once per dataset (each firing
# ``on_evaluate``) and then returns them merged, with no event; and ``skip_memory_metrics=False``, whose
# memory metrics are added after the event (``tests/lint/test_move_result.py`` runs both).
RESULT_SEEN = {"evaluate": "metrics"}
# A copy of ``Trainer.log`` fires ``on_log`` itself right after appending its record to the history
# (``output = {**logs, "step": ...}; self.state.log_history.append(output)``): at ``on_log`` that record is
# ``state.log_history[-1]``, the same object, and code after the dispatch that reads it reads it there.
# Recomputed from ``logs`` it would not be the same: with ``disable_tqdm=True``, ``PrinterCallback.on_log``
# pops ``total_flos`` from ``logs`` before a callback added later sees them
# (``tests/oracle/moves/record_written_after_own_on_log.py``).
RECORDED = "state.log_history[-1]"
_HISTORY_APPEND = "self.state.log_history.append"
# Moved code that calls ``self.log(...)`` logs from inside the event its callback handles: a callback added
# after the moved one sees that ``on_log`` before the event (the history is the same). The move names it
# (``trainwright.testing.compare.NESTED_LOG``, the same words). An evaluation or prediction started there
# would dispatch a whole run of events inside it, which no named difference covers, and a log made inside
# ``on_log`` would run the moved code again, without end: no move.
NESTED_LOG = "logs from inside its event: callbacks added after it see that `on_log` before the event"
_EVENT_DISPATCH = re.compile(r"\bself\.(log|evaluate|predict|train)\s*\(")
# ...and the events code the override keeps fires (``_fired_again``): a callback at one of them would run
# there too. A ``log`` override that dispatches ``on_log`` again after ``super().log()`` (a copied tail of an
# old ``Trainer.log``) had its file lines moved to ``on_log`` and written twice
# (``tests/oracle/refused/file_line_after_log_that_dispatches_on_log_again.py``).
_HANDLER_DISPATCH = re.compile(r"\bself\.callback_handler\.(on_\w+)\s*\(")
_ANY_EVENT = "*"
_FIRED_BY = {
    "log": {"on_log"},
    "evaluate": {"on_evaluate", "on_log", "on_prediction_step"},
    "predict": {"on_predict", "on_prediction_step"},
    "train": {_ANY_EVENT},
}
# Methods the loop calls right after one of these events, each time, with nothing between (4.x's
# ``_inner_training_loop`` and 5.x's ``_run_epoch``: ``on_step_end`` then ``_maybe_log_save_evaluate``, and
# ``on_epoch_end`` then it once more). Code before its ``super()`` call runs at all of them; code after it
# runs after the log, evaluation and checkpoint the call may make, where no event fires: no move.
BEFORE_EACH_CALL = {"_maybe_log_save_evaluate": ("on_step_end", "on_epoch_end")}
_ANY = frozenset({("before", False), ("before", True), ("after", False), ("after", True)})
_UNGATED = frozenset({("before", False), ("after", False)})
# The placements the oracle found equal (``scripts/move_audit.py``: a print before and after each method's
# ``super()`` call, gated on the global step or not, and a file appended after it), as method -> (side,
# gated on progress). A move whose code sits elsewhere is not written: a placement proven on paper from
# the events table still ran code at other moments (a print after ``create_optimizer`` gated on the step
# went to ``on_log``, code after ``get_train_dataloader`` to ``on_step_end``). Code before ``_evaluate`` would
# run after the evaluation, at ``on_evaluate``: the oracle's lines cannot tell, but no difference is named.
PROVEN_PLACEMENTS: dict[str, frozenset[tuple[str, bool]]] = {
    "training_step": _ANY,
    "compute_loss": _ANY,
    "compute_loss_context_manager": _ANY,
    "_prepare_inputs": _ANY,
    "log": _ANY,
    "evaluate": frozenset({("after", False), ("after", True)}),
    "predict": _ANY - {("before", True)},
    "prediction_step": _UNGATED,
    "_maybe_log_save_evaluate": frozenset({("before", False), ("before", True)}),
    "_save_checkpoint": _UNGATED | {("after", True)},
    "create_optimizer": _UNGATED,
    "create_scheduler": _UNGATED,
    "train": _UNGATED,
    "_inner_training_loop": _UNGATED,
}
# ``evaluation_loop`` has none: its code runs before the evaluation, and no event fires before it on a user's
# ``evaluate()``/``predict()``; the events after it find the model switched to ``eval()`` (dropout off), so
# samples generated there are not those the override drew in the middle of training.
# ...and code before the call that the call's own work consumes, per method: ``_save_checkpoint`` pushes
# the output folder to the Hub inside the call (``push_to_hub``: ``_push_from_checkpoint``), so a file
# written before it goes up with the checkpoint and one written at ``on_save`` may not (the upload is
# already under way); ``log`` hands ``on_log`` the ``logs`` it was given with ``epoch`` (and TRL's
# trainers their own metrics) merged in, so code before it that reads them would read another dict.
_CONSUMED_BEFORE: dict[str, frozenset[str]] = {"_save_checkpoint": frozenset({K.FILE, K.ACTION})}
_READ_CHANGED_BEFORE = {"log": "logs"}
# ...except code before ``train``/``_inner_training_loop`` that reads what a resume restores after it ran
# and before ``on_train_begin`` (the audit's print of ``global_step`` read 0 there and 2 at the event):
# the trainer's state, and for ``train`` the model its checkpoint is loaded into.
_RESTORED_BEFORE_BEGIN = {
    "train": re.compile(r"\bself\.(state|model)\b"),
    "_inner_training_loop": re.compile(r"\bself\.state\b"),
}
RESULT_DIFFERS = (
    "sees the metrics `on_evaluate` receives: once per dataset of a dict `eval_dataset` (not again merged), "
    "and without the memory metrics `skip_memory_metrics=False` adds after it"
)

# Method parameters an event receives, bound from ``kwargs`` in the callback (``evaluation_loop`` sets its
# ``dataloader`` as the handler's ``eval_dataloader``).
KWARGS = {"model": "model", "logs": "logs", "metrics": "metrics", "dataloader": "eval_dataloader"}

# Method parameters no event receives but the Trainer holds, per method: on every proven path the
# argument is that attribute. ``_save_checkpoint(model, trial)`` is called by ``_maybe_log_save_evaluate``
# with the ``trial`` of ``train(trial=...)``, and ``train`` first runs ``_hp_search_setup(trial)``, which sets
# ``self._trial = trial`` unconditionally (4.36 .. 5.x); ``on_save`` fires right after that call. (The opt-in
# SIGTERM checkpoint passes ``trial=None``; no event fires there, so no move is proven on it anyway.)
# ``training_step(model, ...)`` gets the loop's outermost model (DDP, DeepSpeed, FSDP), which the training
# loop keeps as ``self.model_wrapped`` before its first step (4.45 .. 5.x); an event's ``model`` is the bare
# ``self.model``, on which moved code calling ``model.module.f(...)`` under ``n_gpu > 1`` would fail.
HELD = {"_save_checkpoint": {"trial": "_trial"}, "training_step": {"model": "model_wrapped"}}

# Calls that only build a value, beyond ``kinds.PURE_CALLS``, for a local the move recomputes (a path).
_PURE_BUILDERS = frozenset(
    {"Path", "pathlib.Path", "PurePath", "os.path.basename", "os.path.dirname", "os.path.splitext"}
)


@dataclass(frozen=True)
class MoveToCallback(Edit):
    """Move statements of ``class_name.method`` to a callback. ``line`` is the ``class`` line (the fixer
    rewrites the class statement, and shifts only ``line``): every other position is an offset from it."""

    method: str
    line: int
    class_name: str
    def_offset: int
    callback: str
    spans: tuple[tuple[int, int], ...]  # offsets of the moved statements' first and last lines
    split_offset: int  # the ``super()`` call: statements before it go to ``before_event``
    before_event: str
    after_event: str
    bind: tuple[tuple[str, str], ...]  # (parameter, the event kwarg that holds it)
    drop_override: bool
    has_init: bool
    needs_import: bool
    also: tuple[str, ...] = ()  # events that stand in on other paths (``on_prediction_step``, ``on_predict``)
    # when set, the event methods to write and which halves (``before``/``after`` the ``super()`` call)
    # each runs, in order: a span per micro-batch (``MICRO_BATCH_SPAN``)
    span: tuple[tuple[str, str], ...] = ()
    # the release ``SPAN_END`` fires from, when the range starts before it (``SPAN_FALLBACK`` then)
    fallback_since: str = ""
    # (parameter, the trainer attribute that holds it on every proven path: ``HELD``)
    held: tuple[tuple[str, str], ...] = ()
    # what the moved code does otherwise than the override, named (``RESULT_DIFFERS``, ``NESTED_LOG``)
    differs: str = ""
    # the ``if`` tests of the override that hold the moved code, in its terms (``held_condition``)
    guard: str = ""
    # locals the moved code reads that the history's last record holds at the event (``RECORDED``)
    recorded: tuple[str, ...] = ()
    unsafe: bool = True

    def bindings(self) -> list[tuple[str, str]]:
        """(local, expression) of each method parameter the moved code reads, as a handler binds it."""
        return [
            *((name, f'kwargs.get("{key}")') for name, key in self.bind),
            *((name, f"self.trainer.{attr}") for name, attr in self.held),
            *((name, RECORDED) for name in self.recorded),
        ]

    def event_names(self) -> list[str]:
        """The events the callback's methods handle, in the order the fix writes them (a side of the
        ``super()`` call with no moved code writes no event)."""
        if self.span:
            return [e for e, _ in self.span]
        before = any(first < self.split_offset for first, _ in self.spans)
        after = any(first > self.split_offset for first, _ in self.spans)
        sides = [e for e, has in ((self.before_event, before), (self.after_event, after)) if has]
        return list(dict.fromkeys((*sides, *self.also)))

    def describe(self) -> str:
        events = "`/`".join(self.event_names())
        gone = "; remove the override" if self.drop_override else ""
        held = "code runs after" if self.span == AFTER_MICRO_BATCH else "span also holds"
        older = (
            f" (before transformers {self.fallback_since}, `{SPAN_FALLBACK}`: there the last micro-batch's"
            f" {held} the optimiser step)"
            if self.fallback_since
            else ""
        )
        differs = f" (the code {self.differs})" if self.differs else ""
        return f"Move them to `{self.callback}.{events}`{older}{differs}, registered in `__init__`{gone}"


_IMPORT = re.compile(r"^\s*(from\s+\S+\s+)?import\b[^\n]*\bTrainerCallback\b", re.MULTILINE)
# Per file and per move type (one fix pass applies all of a rule's moves at once, each in its own
# segment): the line of the first class whose move writes the import. A second class in the file
# planned from the same text would write it again (issue 33).
_IMPORTER: WeakKeyDictionary[FileUnit, dict[type, int]] = WeakKeyDictionary()


def _needs_import(ctx: ClassContext, fn: FunctionNode, edit_type: type) -> bool:
    """No ``TrainerCallback`` import above the class, and no earlier class of the file whose move (of
    the same pass) writes one. Classes are checked in the order of the file. A method with a ``noqa``
    comment never claims the import: its finding may be suppressed, its fix then not applied, and a
    later class relying on its import would be left without one (a second import is the lesser harm)."""
    line = ctx.node.lineno
    above = ctx.unit.text(1, line - 1) if line > 1 else ""
    if "TrainerCallback" in above and _IMPORT.search(above) is not None:
        return False
    claims = _IMPORTER.setdefault(ctx.unit, {})
    first = claims.get(edit_type)
    if first is not None and first < line:
        return False
    if "noqa" not in ctx.unit.text(fn.lineno, fn.end_lineno or fn.lineno).lower():
        claims[edit_type] = min(line, first or line)
    return True


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def _drop_override(effects: MethodEffects, fn: FunctionNode, moved: set[int]) -> bool:
    """After the move, the body is only ``[result =] super().m(<own arguments>)`` and its return."""
    if effects.delegation is None or not effects.delegation_passthrough or effects.delegations != 1:
        return False
    if effects.statements[effects.delegation].parent != -1:
        return False
    result = effects.result_locals()
    for i, s in enumerate(effects.statements):
        if s.parent != -1 or i in moved or i == effects.delegation or is_docstring(s.node):
            continue
        node = s.node
        if isinstance(node, ast.Return) and (
            node.value is None or (isinstance(node.value, ast.Name) and node.value.id in result)
        ):
            continue
        return False
    return True


class Planned(NamedTuple):
    """A rule's move (``None``: not mechanical) and, when an event would run the code at another moment
    than the override did, why (the finding's ``fix_note``, said by ``lint`` and ``fix --suggest``)."""

    move: MoveToCallback | None
    note: str = ""


def plan_move(
    ctx: ClassContext, fn: FunctionNode, effects: MethodEffects, parts: list[int], events: tuple[str, ...],
    edit_type: type[MoveToCallback], also: tuple[str, ...] = (),
) -> Planned:  # fmt: skip
    """The move of ``parts`` (outermost statement indices) to ``events`` (see the module docstring)."""
    parts = whole_branches(effects, parts)
    body = stand_in(effects, parts) if fn.name in PER_MICRO_BATCH else None
    if body is not None:  # a re-implementation: its body is split as the ``super()`` call would be
        effects = replace(effects, delegation=body, delegations=1, delegation_passthrough=False)
    held = held_condition(effects, parts)
    note = (
        held.refusal
        or timing_refusal(fn.name, events, effects, parts)
        or _gradients_refusal(fn.name, ctx.unit, effects, parts)
    )
    if note:
        return Planned(None, note)
    move = _mechanical_move(ctx, fn, effects, parts, events, edit_type, also)
    if move is not None and held.guard:
        # a timer's halves under a condition: its clock would start where it did not
        if move.span == MICRO_BATCH_SPAN:
            return Planned(
                None, "a timer held by a condition of the override has no event pair that keeps it"
            )
        move = replace(move, guard=held.guard)
    if move is None or not move.differs:
        return Planned(move)
    return Planned(move, f"the moved code {move.differs}")


def _gradients_refusal(method: str, unit: FileUnit, effects: MethodEffects, parts: list[int]) -> str:
    """Why code after ``super().training_step()`` that reads gradients has no move (``_READS_GRADIENTS``),
    or ``""``. Read from the statements' text (rules walk no trees)."""
    if _span(method, effects, parts) != AFTER_MICRO_BATCH:
        return ""
    if not any(_READS_GRADIENTS.search(_text(unit, effects, i)) for i in parts):
        return ""
    return (
        "it reads the gradients the micro-batch left, which the Trainer clips at the last micro-batch of a "
        "step before any event fires"
    )


def _mechanical_move(
    ctx: ClassContext, fn: FunctionNode, effects: MethodEffects, parts: list[int], events: tuple[str, ...],
    edit_type: type[MoveToCallback], also: tuple[str, ...],
) -> MoveToCallback | None:  # fmt: skip
    """The move, or ``None`` when it reads what no event receives or the code left behind needs."""
    if not events or not parts or effects.delegation is None or not effects.delegates_always():
        return None  # the event fires on the paths that call ``super()``; the code around it runs on all
    under = {j for i in parts for j in effects.under(i)}
    reads: set[str] = set()
    for j in under:
        reads |= effects.statements[j].uses
    delegation = effects.statements[effects.delegation]
    result = effects.result_locals()
    params = set(param_names(fn)) - {"self"}
    held = HELD.get(fn.name, {})
    seen = _seen_result(fn.name, effects, under, reads & result)
    if seen is None or (reads & params) - set(KWARGS) - set(held):
        return None
    recorded = _recorded(fn.name, effects, under, reads)
    bound = {name for name, _ in seen} | set(recorded)  # the event hands it over: nothing to recompute
    handed = (params & set(KWARGS)) | set(held)  # the callback has them too: a definer may read them
    per_micro_batch = _per_micro_batch(fn.name, effects, parts)
    after = delegation.end_line if fn.name in EVENT_AT_RETURN else None
    gathered = _gathered(ctx.unit, effects, parts, reads - bound, (params, handed), per_micro_batch, after)
    if gathered is None:
        return None
    parts, recomputed = gathered
    reads |= recomputed
    dispatched = {m for i in parts for m in _EVENT_DISPATCH.findall(_text(ctx.unit, effects, i))}
    placed = _placed(fn.name, events, effects, parts, also)
    if _runs_elsewhere(ctx.unit, fn.name, effects, parts, (placed, dispatched)):
        return None
    base = ctx.node.lineno
    init = ctx.cls.methods.get("__init__")
    if init is not None and "super" not in ctx.unit.text(init.line, init.end_line):
        return None  # the fixer rewrites only what mentions ``super``: an ``__init__`` without it stays as is
    spans = tuple(
        sorted((effects.statements[i].line - base, effects.statements[i].end_line - base) for i in parts)
    )
    span = _span(fn.name, effects, parts)
    return edit_type(
        method=fn.name,
        line=base,
        class_name=ctx.name,
        def_offset=fn.lineno - base,
        callback=f"{ctx.name}{_camel(fn.name)}Callback",
        spans=spans,
        split_offset=delegation.line - base,
        **_placement(fn.name, events, effects, parts),
        **_bound(reads & params, held, seen),
        recorded=recorded,
        drop_override=_drop_override(effects, fn, set(parts)),
        has_init=init is not None,
        also=_extra(fn.name, events, effects, parts, also),
        span=span,
        fallback_since=_fallback_since(ctx) if span else "",
        needs_import=_needs_import(ctx, fn, edit_type),
        differs=_difference(effects, parts, bool(seen), bool(dispatched)),
    )


class _Bound(TypedDict):
    """How the callback gets the method's parameters the moved code reads: ``bind`` from the event's
    ``kwargs`` (``KWARGS``, and the ``super()`` result it hands over), ``held`` from the trainer (``HELD``,
    first: ``training_step``'s ``model`` is ``model_wrapped``, not the event's bare model)."""

    bind: tuple[tuple[str, str], ...]
    held: tuple[tuple[str, str], ...]


def _bound(read: set[str], held: dict[str, str], seen: tuple[tuple[str, str], ...]) -> _Bound:
    handed = sorted(name for name in read if name in KWARGS and name not in held)
    return {
        "bind": tuple((name, KWARGS[name]) for name in handed) + seen,
        "held": tuple((name, held[name]) for name in sorted(read & set(held))),
    }


def _difference(effects: MethodEffects, parts: list[int], reads_result: bool, logs: bool) -> str:
    """What the moved code does otherwise than the override, named: a result read from the event
    (``RESULT_DIFFERS``), and a log made inside the event (``NESTED_LOG``)."""
    first = RESULT_DIFFERS if reads_result and True not in _sides(effects, parts) else ""
    return "; it ".join(said for said in (first, NESTED_LOG if logs else "") if said)


def _runs_elsewhere(
    unit: FileUnit, method: str, effects: MethodEffects, parts: list[int],
    moved: tuple[tuple[str, ...], set[str]],
) -> bool:  # fmt: skip
    """The move would run the code at other moments than the override, whatever the events table says:
    an evaluation started inside the event, or a log inside ``on_log`` (which would call itself; ``moved``
    is the events the code is placed at, not the rule's candidates: a log per micro-batch goes to
    ``on_step_begin``/``on_substep_end``, never ``on_log``, and the trainer methods the code calls that
    dispatch events), a placement the oracle
    did not find equal (``PROVEN_PLACEMENTS``), code before the call that its work consumes or whose
    reads it changes (``_CONSUMED_BEFORE``, ``_READ_CHANGED_BEFORE``), or a read of what a resume restores
    before the event (``_RESTORED_BEFORE_BEGIN``)."""
    events, dispatched = moved
    if dispatched - {"log"} or (dispatched and "on_log" in events):
        return True
    if _fired_again(unit, effects, parts, events):
        return True
    if not _proven_placement(method, effects, parts):
        return True
    split = call_line(effects)
    before = [j for i in parts if effects.statements[i].line < split for j in effects.under(i)]
    consumed, changed = _CONSUMED_BEFORE.get(method, frozenset()), _READ_CHANGED_BEFORE.get(method)
    if any(effects.statements[j].kinds & consumed or changed in effects.statements[j].uses for j in before):
        return True
    restored = _RESTORED_BEFORE_BEGIN.get(method)
    return restored is not None and any(
        restored.search(_text(unit, effects, i)) for i in parts if effects.statements[i].line < split
    )


def _fired_again(unit: FileUnit, effects: MethodEffects, parts: list[int], events: tuple[str, ...]) -> bool:
    """Code the override keeps fires one of ``events`` itself (``_FIRED_BY``), besides the call the move
    splits at: a callback there would also run at that dispatch, more often than the moved code ran."""
    moved = {j for i in parts for j in effects.under(i)}
    placed = {*events, _ANY_EVENT}
    for i, statement in enumerate(effects.statements):
        if i in moved or i == effects.delegation or isinstance(statement.node, COMPOUND):
            continue  # a holder's own text is its body's: each statement of the body is checked itself
        text = _text(unit, effects, i)
        fired = set(_HANDLER_DISPATCH.findall(text))
        for name in _EVENT_DISPATCH.findall(text):
            fired |= _FIRED_BY[name]
        if fired & placed:
            return True
    return False


def _proven_placement(method: str, effects: MethodEffects, parts: list[int]) -> bool:
    """Every side of the ``super()`` call the code sits on, gated on progress or not, is a placement the
    oracle found equal for ``method`` (``PROVEN_PLACEMENTS``)."""
    proven = PROVEN_PLACEMENTS.get(method, frozenset())
    gated = any(effects.gated_on_progress(i) for i in parts)
    return all(("before" if side else "after", gated) in proven for side in _sides(effects, parts))


def _text(unit: FileUnit, effects: MethodEffects, index: int) -> str:
    """The source lines of statement ``index``, with everything in it."""
    statement = effects.statements[index]
    return unit.text(statement.line, statement.end_line)


def _gathered(
    unit: FileUnit, effects: MethodEffects, parts: list[int], reads: set[str],
    arguments: tuple[set[str], set[str]], per_micro_batch: bool, after: int | None,
) -> tuple[list[int], set[str]] | None:  # fmt: skip
    """``parts`` with the statements that define what they read (``_with_definers``), and the names
    those statements read in turn; ``None`` when a definer cannot move, or when code left behind runs
    between moved statements (``_interleaved``). ``arguments`` are the method's parameters and those
    of them the event hands over; ``after`` is as in ``_definer``."""
    params, handed = arguments
    under = {j for i in parts for j in effects.under(i)}
    with_definers = _with_definers(
        unit, effects, parts, under, reads - params, params - handed, per_micro_batch, after
    )
    if with_definers is None:
        return None
    recomputed: set[str] = set()
    if len(with_definers) > len(parts):  # the recomputed locals' reads are the callback's too
        under = {j for i in with_definers for j in effects.under(i)}
        recomputed = {u for j in under for u in effects.statements[j].uses}
    if _interleaved(effects, under):
        return None
    return with_definers, recomputed


def _seen_result(
    method: str, effects: MethodEffects, moved: set[int], read: set[str]
) -> tuple[tuple[str, str], ...] | None:  # fmt: skip
    """How the moved code gets the ``super()`` result it reads (``read``): ``()`` when it reads none,
    ``(("metrics", "metrics"),)`` when the event receives it (``RESULT_SEEN``: ``x = super().evaluate(...)``,
    read only after the call and never touched by code left behind but ``return x``), else ``None``."""
    if not read:
        return ()
    kwarg = RESULT_SEEN.get(method)
    assert effects.delegation is not None
    node = effects.statements[effects.delegation].node
    if kwarg is None or not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
    ):
        return None
    name = node.targets[0].id
    for i, s in enumerate(effects.statements):
        left = i not in moved and i != effects.delegation and name in s.uses | s.defines
        if left and not (isinstance(s.node, ast.Return) and isinstance(s.node.value, ast.Name)):
            return None  # the code left behind reads or changes it after the event
    return ((name, kwarg),)


def _recorded(method: str, effects: MethodEffects, moved: set[int], reads: set[str]) -> tuple[str, ...]:
    """The local the moved code reads that ``state.log_history[-1]`` holds at the event (``RECORDED``):
    in a copy of ``log`` whose top-level statement right before its own ``on_log`` dispatch appends that
    local to the history, read by moved code only after the dispatch, and touched by no code left behind
    after the append. ``()`` otherwise (the local is then judged as any other)."""
    event = OWN_EVENTS.get(method)
    if event is None or effects.delegation is None:
        return ()
    statements = effects.statements
    dispatch = statements[effects.delegation]
    call = getattr(dispatch.node, "value", None)
    if dispatch.parent != -1 or not (
        isinstance(call, ast.Call) and dotted_name(call.func) == f"self.callback_handler.{event}"
    ):
        return ()  # a ``super().log(...)`` appends its own record, one the override never held
    tops = [i for i, s in enumerate(statements) if s.parent == -1 and not is_docstring(s.node)]
    at = tops.index(effects.delegation)
    if at == 0:
        return ()
    append = statements[tops[at - 1]]
    name = _appended_name(append.node)
    if name is None or name not in reads:
        return ()
    for i, s in enumerate(statements):
        if name not in s.uses | s.defines:
            continue
        if (i in moved) != (s.line > dispatch.end_line) or (i not in moved and s.line > append.line):
            return ()
    return (name,)


def _appended_name(node: ast.stmt) -> str | None:
    """``x`` of ``self.state.log_history.append(x)``."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not (isinstance(call, ast.Call) and dotted_name(call.func) == _HISTORY_APPEND and not call.keywords):
        return None
    args = call.args
    return args[0].id if len(args) == 1 and isinstance(args[0], ast.Name) else None


def call_line(effects: MethodEffects) -> int:
    """The line of the ``super()`` call, which splits the moved code into its two sides."""
    assert effects.delegation is not None
    return effects.statements[effects.delegation].line


def _sides(effects: MethodEffects, parts: list[int]) -> set[bool]:
    """Which sides of the ``super()`` call ``parts`` sit on: ``True`` before it, ``False`` after it."""
    split = call_line(effects)
    return {effects.statements[i].line < split for i in parts}


#: what a carried condition may call besides reading attributes of ``self`` (no effect, same answer twice)
_PURE_IN_GUARD = frozenset({"len", "hasattr", "getattr", "isinstance", "bool", "int", "float", "str"})
_RANK_CHECKS = frozenset({"is_world_process_zero", "is_local_process_zero"})


class Held(NamedTuple):
    """The condition moved code keeps from the ``if`` statements that hold it in the override and stay
    there (``guard``, in the override's terms: ``self.args.warmup_steps > 0``), or why it cannot leave
    (``refusal``). Both empty: nothing holds it but ``with`` blocks, or nothing at all."""

    guard: str = ""
    refusal: str = ""


def held_condition(effects: MethodEffects, parts: list[int]) -> Held:
    """What holds ``parts`` in the override: the ``if`` tests they run under, carried into the callback
    when every part runs under the same ones (in their bodies, not an ``else``), each test reads only
    attributes of ``self`` (``self.args``, ``self.state``, the trainer's own), and no code left in the
    override writes what a test reads; a ``with`` decides no *whether* (``torch.cuda.empty_cache()``
    inside ``with torch.no_grad():`` moves as it is). Anything else holding them (a loop, a ``try``, a
    test of a local, an ``elif``) refuses the move.

    Why: the callback used to get the moved statement without what held it, and ran it where the
    override did not: a print under ``if self.args.warmup_steps > 0:`` (beside a write that stays)
    printed on every hundredth step whatever the condition. A test re-evaluated at the event gives the
    override's answer only when nothing between the two changes what it reads.
    ``tests/oracle/moves/print_under_a_kept_condition.py`` (carried, oracle-equal) and
    ``tests/oracle/refused/print_inside_a_kept_condition.py`` (refused)."""
    chains: set[tuple[int, ...]] = set()
    for part in parts:
        chain, child = [], part
        for holder in effects.path(part)[1:]:
            node = effects.statements[holder].node
            inside = isinstance(node, ast.If) and any(n is effects.statements[child].node for n in node.body)
            if inside and effects.statements[child].line != effects.statements[holder].line:
                chain.append(holder)
            elif not isinstance(node, (ast.With, ast.AsyncWith)):
                return Held(refusal=_held_note(effects, part, holder, "without that condition"))
            child = holder
        chains.add(tuple(chain))
    if chains == {()}:
        return Held()
    if len(chains) != 1:
        return Held(refusal="the moved statements run under different conditions of the override")
    holders = list(reversed(chains.pop()))  # outermost first
    tests = [ast.unparse(effects.statements[h].node.test) for h in holders]  # type: ignore[attr-defined]
    reads: set[str] = set()
    for holder, test in zip(holders, tests):
        found = _test_reads(effects.statements[holder].uses, test)
        if found is None:
            return Held(
                refusal=_held_note(effects, parts[0], holder, "under a condition it cannot test alike")
            )
        reads |= found
    moved = {j for i in parts for j in effects.under(i)}
    for i, s in enumerate(effects.statements):
        changed = {d.split(".")[1] for d in s.defines if d.startswith("self.")} & reads
        if i not in moved and changed:
            why = f"code left in the override changes `self.{min(changed)}`, which the condition holding it reads"
            return Held(refusal=why)
    return Held(guard=" and ".join(f"({t})" for t in tests) if len(tests) > 1 else tests[0])


def _held_note(effects: MethodEffects, part: int, holder: int, what: str) -> str:
    return (
        f"line {effects.statements[part].line} runs inside the statement at line "
        f"{effects.statements[holder].line}, which stays in the override: a callback would run it {what}"
    )


def _test_reads(uses: set[str], test: str) -> set[str] | None:
    """The attributes of ``self`` an ``if`` test reads (``args`` for ``self.args.warmup_steps``), given
    the statement's recorded ``uses`` and the test's text, or ``None`` when a callback cannot test it
    alike: it reads a local or a parameter, or calls what is not known pure other than the trainer's
    rank checks (rules walk no trees)."""
    if any(not name.startswith("self.") and name not in _PURE_IN_GUARD for name in uses):
        return None
    for match in _CALL.finditer(test):
        name = match.group(1) or ""
        rank = name.startswith("self.") and name.rsplit(".", 1)[-1] in _RANK_CHECKS
        if not (rank or name in _PURE_IN_GUARD or _pure_text(f"{name}()")):
            return None
    return {name.split(".")[1] for name in uses if name.startswith("self.")}


def timing_refusal(
    method: str, events: tuple[str, ...], effects: MethodEffects, parts: list[int]
) -> str | None:
    """Why moving ``parts`` to ``events`` would run the code at a moment the override did not, or None:

    - code before and after the ``super()`` call put into one event (no event begins the method, as for
      ``prediction_step``) where a local set before is read after: the two halves run back to back, so
      a timer there measures nothing (two independent files written around a checkpoint may share
      ``on_save``);
    - code before a method the loop calls only when a control flag is set (``evaluate`` at
      ``control.should_evaluate``) put at a step event, which fires on every step: it would run on steps
      the method does not (issue 32's moved print).
    ``plan_move`` hands the reason to the rule, which puts it on the finding (``Finding.fix_note``)."""
    if not events or effects.delegation is None:
        return None
    placement = _placement(method, events, effects, parts)
    sides = _sides(effects, parts)
    before, after = True in sides, False in sides
    span = _span(method, effects, parts) == MICRO_BATCH_SPAN
    one_event = placement["before_event"] == placement["after_event"]
    if before and after and not span and one_event and crosses_the_call(effects, parts):
        return (
            f"no event begins `{method}`: code before and after `super().{method}()` would run back to back "
            f"in `{placement['before_event']}`, and a timer there would measure nothing"
        )
    flag = RUNS_ONLY_WHEN.get(method)
    if before and flag is not None and placement["before_event"] in STEP_EVENTS:
        return (
            f"`{placement['before_event']}` fires on every step, `{method}` only when `control.{flag}` "
            "is set; a move there would run the code on other steps"
        )
    return None


def crosses_the_call(effects: MethodEffects, parts: list[int]) -> bool:
    """A local set before the ``super()`` call is read after it (``start = time.time()`` ... ``elapsed``):
    what it carried across the call is lost when both halves run back to back, or when one half moves
    without the other."""
    split = call_line(effects)
    moved = {j for i in parts for j in effects.under(i)}
    set_before = {
        d for j in moved if effects.statements[j].line < split for d in effects.statements[j].defines
    }
    return any(effects.statements[j].uses & set_before for j in moved if effects.statements[j].line > split)


def _interleaved(effects: MethodEffects, moved: set[int]) -> bool:
    """Code left behind runs between two moved statements of the same side of the ``super()`` call
    (``start = time.time()`` and ``elapsed = ...`` around the method's own work, both inside a block):
    the event would run them back to back, so what they measured or bracketed is lost. Statements that
    only hold moved ones (their ``if``/``with``) and statements that do nothing do not count."""
    split = call_line(effects)
    holders = {p for i in moved for p in effects.path(i)[1:]}
    for before in (True, False):
        lines = [effects.statements[i].line for i in moved if (effects.statements[i].line < split) == before]
        if len(lines) < 2:
            continue
        for i, s in enumerate(effects.statements):
            if (
                i not in moved
                and i not in holders
                and i != effects.delegation
                and min(lines) < s.line < max(lines)
                and s.kinds - {K.NOOP}
            ):
                return True
    return False


def _fallback_since(ctx: ClassContext) -> str:
    """The release ``SPAN_END`` fires from, when some release of the target range lacks it; else ``""``."""
    catalog = ctx.catalog
    history = catalog.event_history(SPAN_END) if catalog is not None else None
    if catalog is None or history is None:
        return ""
    missing = [r for r in ctx.releases if SPAN_END not in catalog.at(r).events]
    return history.since if missing else ""


def _with_definers(
    unit: FileUnit,
    effects: MethodEffects,
    parts: list[int],
    under: set[int],
    names: set[str],
    params: set[str],
    per_micro_batch: bool,
    after: int | None = None,
) -> list[int] | None:
    """``parts`` plus the top-level statements that define the locals they read (``folder = ...``, or
    an ``if``/``else`` whose branches only assign), and the definers of the locals those read in turn
    (``ids = ...`` for ``out = model.generate(ids)``), so the callback computes them too, and the
    statements that keep an attribute only the moved code reads (``_kept_state``); ``None`` when such a
    statement has an effect of its own (``_definer``), reads one of ``params`` (those the event does not
    hand over), or defines a local the code left behind still reads, or when an attribute the code
    reads (``self._step``) is set by code left behind at a point the event would not see
    (``_attribute_in_step``)."""
    local = params | {d for s in effects.statements for d in s.defines}
    extra: list[int] = []
    todo = sorted(names & local)
    seen: set[str] = set()
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in params:
            return None  # a value of the call the event does not hand over
        definers = [i for i, s in enumerate(effects.statements) if name in s.defines and i not in under]
        if not definers:
            continue  # defined inside the moved statements (or not a local at all)
        if name.startswith("self."):
            kept = _kept_state(effects, definers, name, local)
            if kept is not None:
                extra.extend(kept)  # a counter only the moved code reads: the callback keeps it counting
            elif per_micro_batch or not _attribute_in_step(effects, parts, name, definers):
                return None
            continue
        top = _definer(unit, effects, definers, after)
        if top is None:
            return None
        if top not in extra:
            extra.append(top)
            todo.extend(sorted({u for j in effects.under(top) for u in effects.statements[j].uses} & local))
    moved = under | {j for i in extra for j in effects.under(i)}
    defined = {n for i in extra for j in effects.under(i) for n in effects.statements[j].defines}
    for i, s in enumerate(effects.statements):
        if i not in moved and s.uses & defined:
            return None
    return sorted(set(parts) | set(extra))


def _kept_state(effects: MethodEffects, definers: list[int], name: str, local: set[str]) -> list[int] | None:
    """The top-level statements that set ``self.x`` (``name``) for the moved code alone (``self.n += 1``
    before a print gated on ``self.n``), when they only keep state: no data of the method (nothing it
    returns or another method computes with reads ``self.x``), no other effect, no local or parameter
    read. Moved too, they run on the same side of ``super()`` as before, as often; ``None`` otherwise."""
    tops = sorted({effects.path(i)[-1] for i in definers})
    for top in tops:
        if top in effects.data:
            return None
        for j in effects.under(top):
            s = effects.statements[j]
            if s.kinds - (K.STATE_KINDS | {K.LOCAL, K.NOOP}) or (s.uses & local) - {name}:
                return None
    return tops


def _definer(unit: FileUnit, effects: MethodEffects, definers: list[int], after: int | None) -> int | None:
    """The one top-level statement holding every definition of a local the moved code reads, when it
    only computes values: a pure assignment, or an ``if`` (``elif``/``else``) of pure assignments, each
    branch on lines of its own. Run once more in the callback it sets the same local and nothing else.

    After line ``after`` (the end of the ``super()`` call of a method whose event fires as that call
    returns, ``EVENT_AT_RETURN``) an assignment may call what is not known pure (``out =
    model.generate(ids)``): moved, it runs at the event, after the same training and before the same
    next step, so whatever it does (random numbers drawn, memory) happens at the same point of the run.
    The locals it reads are the caller's to gather."""
    tops = {effects.path(i)[-1] for i in definers}
    if len(tops) != 1:
        return None
    top = tops.pop()
    for j in effects.under(top):
        s = effects.statements[j]
        computes = after is not None and s.line > after and isinstance(s.node, ast.Assign)
        if s.kinds - ({K.LOCAL, K.UNKNOWN} if computes else {K.LOCAL}):
            return None
        if s.parent != -1 and s.line == effects.statements[s.parent].line:
            return None  # ``if x: y = 1`` on one line: the fixer moves whole lines
        if isinstance(s.node, ast.If):
            if not _pure_text(ast.unparse(s.node.test)):
                return None
        elif not (computes or _pure_assignment(s.node, unit.text(s.line, s.end_line))):
            return None
    return top


def _attribute_in_step(effects: MethodEffects, parts: list[int], name: str, definers: list[int]) -> bool:
    """The moved code reads ``self.x`` that code left behind sets (a counter the data path also reads):
    the event sees the value the code saw when the code ran after the ``super()`` call, its event fires
    after the method (the caller checks: not the per-micro-batch placement, which also runs it at
    ``on_step_begin``), and every such write comes before it. Code before the call is refused: its event
    may fire before the method (``on_step_begin``) or after it (``on_save``)."""
    if effects.delegation is None:
        return False
    split = call_line(effects)
    last_write = max(effects.statements[effects.path(d)[-1]].line for d in definers)
    for i in parts:
        if name in {u for j in effects.under(i) for u in effects.statements[j].uses}:
            line = effects.statements[i].line
            if line < split or last_write >= line:
                return False
    return True


_CALL = re.compile(r"([A-Za-z_][\w.]*)?\s*\(")


def _pure_assignment(node: ast.stmt, text: str) -> bool:
    """``name = <value>`` whose calls are all known to have no effect (``os.path.join``, ``.item()``):
    computing it once more, in the callback, changes nothing else. Read from the statement's text
    (rules walk no trees): a parenthesis that follows no name (a tuple, a call of a call's result)
    counts as an unknown call, and so does one inside a string; too strict, never too lax."""
    if not isinstance(node, ast.Assign):
        return False
    return _pure_text(text.split("=", 1)[1] if "=" in text else text)


def _pure_text(value: str) -> bool:
    """Every call in ``value`` is known to have no effect. A pure method is trusted on a value that is
    not the trainer's own object (``self.model.to(...)`` moves the model): on a name, or on a field of
    ``self.args`` (plain strings and numbers: ``self.args.hub_model_id.split("/")``)."""
    for match in _CALL.finditer(value):
        name = match.group(1) or ""
        last = name.rsplit(".", 1)[-1]
        on_value = not name.startswith("self.") or (name.startswith("self.args.") and name.count(".") >= 3)
        if not (
            name in K.PURE_CALLS
            or name in _PURE_BUILDERS
            or ("." in name and on_value and last in K.PURE_METHODS)
        ):
            return False
    return True


def _per_micro_batch(method: str, effects: MethodEffects, parts: list[int]) -> bool:
    """The code runs once per micro-batch, on one side of the ``super()`` call (code on both sides is a
    span: ``_span``)."""
    if method not in PER_MICRO_BATCH | INSIDE_MICRO_BATCH or effects.delegation is None:
        return False
    return len(_sides(effects, parts)) == 1


def _span(method: str, effects: MethodEffects, parts: list[int]) -> tuple[tuple[str, str], ...]:
    """The events of a per-micro-batch move that are tied to the micro-batch itself: a timer's
    (``MICRO_BATCH_SPAN``), or the code after the call's (``AFTER_MICRO_BATCH``); ``()`` otherwise."""
    if method not in PER_MICRO_BATCH or effects.delegation is None:
        return ()
    sides = _sides(effects, parts)
    if len(sides) == 2:
        return MICRO_BATCH_SPAN
    return AFTER_MICRO_BATCH if sides == {False} else ()


class _Placement(TypedDict):
    """The events a move's code goes to: before and after the ``super()`` call."""

    before_event: str
    after_event: str


def _placement(method: str, events: tuple[str, ...], effects: MethodEffects, parts: list[int]) -> _Placement:
    if method in BEFORE_EACH_CALL:
        first = BEFORE_EACH_CALL[method][0]
        return {"before_event": first, "after_event": first}
    if _per_micro_batch(method, effects, parts):
        return {"before_event": MICRO_BATCH_EVENTS[0], "after_event": MICRO_BATCH_EVENTS[0]}
    return {"before_event": events[0], "after_event": events[-1]}


def _placed(
    method: str, events: tuple[str, ...], effects: MethodEffects, parts: list[int], also: tuple[str, ...]
) -> tuple[str, ...]:  # fmt: skip
    """Every event the move runs the code at: the placement's and the extra ones, not the rule's candidates."""
    placement = _placement(method, events, effects, parts)
    return (
        placement["before_event"],
        placement["after_event"],
        *_extra(method, events, effects, parts, also),
    )


def _extra(
    method: str, events: tuple[str, ...], effects: MethodEffects, parts: list[int], also: tuple[str, ...]
) -> tuple[str, ...]:  # fmt: skip
    """The events besides the placement's that run the moved code too: a fixed set where the placement
    is exact (per call, per micro-batch), else the events the proof added (``also``)."""
    if method in BEFORE_EACH_CALL:
        return BEFORE_EACH_CALL[method][1:]
    if _per_micro_batch(method, effects, parts):
        evaluation = ("on_prediction_step",) if method in INSIDE_MICRO_BATCH else ()
        return (*MICRO_BATCH_EVENTS[1:], *evaluation)
    return tuple(e for e in also if e not in events)
