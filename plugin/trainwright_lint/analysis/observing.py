"""The callback-worthy part of an override, computed once per method for TW201, TW202 and TW203.

From the method's effects (``analysis.effects``) this picks what a ``TrainerCallback`` could do
instead, at statement granularity:

- a **wrapper**: the method delegates to ``super()`` with its own arguments, returns the result
  unchanged, and everything else only observes (or a profiling decorator/context wraps it) — TW202;
- inside a method that also computes, the **observing statements** that belong to a moment of the
  loop — TW201: statements gated on the step, the epoch, the accumulation boundary, the clock or a
  metric; clock reads that bracket the ``super()`` call (timing); tracker, print, file, gc and sample
  output around the ``super()`` call; per-step schedule updates of a hyper-parameter;
- **control flags** set in the subclass — TW203.

Statements copied from transformers' or TRL's own methods (``analysis.upstream``) are upstream's
behaviour, not the user's: none of them is reported.

An analysis, not a rule: it sees one method and the few facts about its class it needs (whether the
method overrides upstream's, whose copies count as upstream code, its effects), which the rules'
``ClassContext.observation`` hands it, so that rules read the result and walk no tree themselves.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trainwright_lint.analysis import kinds as K
from trainwright_lint.analysis.effects import EVENT_AT_RETURN, OWN_EVENTS, MethodEffects
from trainwright_lint.analysis.facts import OBSERVATION
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.analysis.upstream import CopiedStatements
from trainwright_lint.project.summary import MethodSummary
from trainwright_lint.syntax import FunctionNode, child_nodes, dotted_name, walk_expression

# Words without which a method body cannot hold callback-worthy code: a cheap text test that spares
# the analysis of most large methods.
_PROGRESS_WORDS = re.compile(
    r"global_step|epoch|_step\b|steps\b|accumulation|sync_gradients|time|perf_counter|monotonic|metric|best_"
)
_OUTPUT_WORDS = re.compile(
    r"print|wandb|mlflow|tensorboard|writer|logger|logging|\.log|save|open\(|dump|write|gc\.|empty_cache|"
    r"synchronize|profil|timer|generat|sample|table|plot|flush|report|evaluate"
)


def _may_observe(method: MethodSummary, body_text: str) -> bool:
    """Whether the override's text leaves room for callback-worthy code (a cheap test that spares
    the analysis of most large methods): a progress or clock word (gates, timing, schedules), or a
    ``super()`` call together with output words (wrappers, output around the delegation), or a
    profiling decorator."""
    if any(K.is_profiling_name(d) for d in method.decorators):
        return True
    if _PROGRESS_WORDS.search(body_text):
        return True
    return "super(" in body_text and _OUTPUT_WORDS.search(body_text) is not None


# Overrides that replace the training loop wholesale are copies of upstream's loop (from whichever
# release, catalogued or not): the gates and flags in them are the Trainer's, not the user's choices.
LOOP_REPLACEMENTS = frozenset({"train", "_inner_training_loop", "_run_epoch"})
# Entry points whose own bookkeeping after the event they fire is the user's (``CoFiQATrainer.evaluate``
# saves the best checkpoint after ``on_evaluate``). Any other override that fires callback events itself
# (``self.callback_handler.on_log(...)``) re-implements a piece of the loop, usually copied from a release
# older than the catalogue: its gates are the Trainer's, and TW101 reports the override itself.
_EVENT_FIRING_ENTRY_POINTS = frozenset({"evaluate", "predict"})


_EVENT_DISPATCH = re.compile(r"callback_handler\.(on_\w+)")


def _fires_other_events(method: str, body_text: str) -> bool:
    """The override dispatches a callback event other than its own (``log`` firing ``on_log`` is a
    re-implementation of ``log``; one that also fires ``on_save`` is a piece of the loop)."""
    own = OWN_EVENTS.get(method)
    return any(event != own for event in _EVENT_DISPATCH.findall(body_text))


@dataclass
class Observation:
    """The callback-worthy statements of one method."""

    wrapper: bool = False  # TW202: the whole override only observes
    wrapper_kinds: set[str] = field(default_factory=set)
    wrapper_parts: list[int] = field(default_factory=list)  # TW202: the observing statements around it
    parts: list[int] = field(default_factory=list)  # TW201: outermost statement indices, in order
    reasons: set[str] = field(default_factory=set)  # "timing", "gated", "output", "schedule"
    kinds: set[str] = field(default_factory=set)
    kinds_by_reason: dict[str, set[str]] = field(default_factory=dict)
    gates: frozenset[str] = frozenset()
    controls: list[ast.stmt] = field(default_factory=list)  # TW203
    effects: MethodEffects | None = None


@dataclass(frozen=True)
class MethodFacts:
    """What ``observe`` needs to know about a method beyond its text: whether it overrides a method
    upstream defines, and (computed only if needed) its effects and the upstream classes whose
    copies of it count as upstream code (``analysis.upstream.CopiedStatements``)."""

    unit: FileUnit
    qualname: str  # the class's
    overrides_upstream: bool
    effects: Callable[[], MethodEffects]
    owners: Callable[[], list[tuple[Any, str]]]


def observe(facts: MethodFacts, method: MethodSummary, fn: FunctionNode) -> Observation:
    """What of ``method`` a callback could do (memoised per method)."""
    found: Observation = facts.unit.facts.get(
        OBSERVATION, (facts.qualname, method.line), lambda: _observe(facts, method, fn)
    )
    return found


def _observe(facts: MethodFacts, method: MethodSummary, fn: FunctionNode) -> Observation:
    """The steps of ``observe``: a cheap text test first, then the effects, control flags (TW203)
    in any method, and for an override of upstream's either a wrapper (TW202) or its parts (TW201)."""
    obs = Observation()
    body_text = facts.unit.text(method.line + 1, method.end_line) if method.end_line > method.line else ""
    override = facts.overrides_upstream and not method.name.startswith("__")
    if not _worth_analysing(method, body_text, override):
        return obs
    effects = facts.effects()
    obs.effects = effects
    copied = CopiedStatements(fn, effects, facts.owners(), facts.unit.facts)
    seeds = _computed_locals(effects, copied) | _hidden_result(method.name, effects) | _own_arguments(fn)
    hidden = _hidden_values(effects, seeds)
    for i, s in enumerate(effects.statements):
        if K.CONTROL in s.kinds and i not in copied and not _driven_by_arguments(effects, i):
            obs.controls.append(s.node)
    if not override:
        return obs
    observing = [i for i in effects.observing() if not _copied_whole(effects, copied, i)]
    if _mark_wrapper(obs, effects, observing, hidden):
        return obs
    chosen = _chosen_parts(effects, observing, hidden, copied, body_text)
    if method.name in EVENT_AT_RETURN:
        _add_records(effects, observing, hidden, chosen)
    _record_parts(obs, effects, chosen)
    return obs


def _copied_whole(effects: MethodEffects, copied: CopiedStatements, index: int) -> bool:
    """The statement and everything in it are upstream's: the user's line under upstream's own
    ``if self.args.should_save:`` is the user's, and so is the block that holds it."""
    return index in copied and all(j in copied for j in effects.under(index))


def _worth_analysing(method: MethodSummary, body_text: str, override: bool) -> bool:
    """Whether the method's text can hold callback-worthy code the user wrote: not for a replaced
    training loop or an override that fires the loop's events itself (both copies of upstream's code,
    whatever release they came from), nor for a text with none of the words such code needs."""
    if not ((override and _may_observe(method, body_text)) or "control.should_" in body_text):
        return False
    if method.name in LOOP_REPLACEMENTS and not re.search(rf"super\(.*?\)\.{method.name}\b", body_text):
        return False  # a replaced training loop: a copy of upstream's, whatever release it came from
    # an override that fires the events itself is a piece of the loop, re-implemented
    return method.name in _EVENT_FIRING_ENTRY_POINTS or not _fires_other_events(method.name, body_text)


def _mark_wrapper(obs: Observation, effects: MethodEffects, observing: list[int], hidden: set[str]) -> bool:
    """Fill ``obs`` as a wrapper (TW202) when the whole override only observes around one plain
    delegation, and say whether it is one. Gated logic is not a wrapper: TW201 reports it more
    precisely."""
    statements = effects.statements
    gated = any(effects.gated_on_progress(j) for i in observing for j in effects.under(i))
    movable = [i for i in observing if not _reads(effects, i, hidden)]
    if gated or len(movable) != len(observing) or not _is_wrapper(effects, observing):
        return False
    obs.wrapper = True
    obs.wrapper_parts = [i for i in observing if effects.kinds_under(i) & K.OBSERVING_KINDS]
    for i in observing:
        obs.wrapper_kinds |= effects.kinds_under(i) & K.OBSERVING_KINDS
    if effects.profiling_decorator or any(K.PROFILE in statements[i].kinds for i in effects.data):
        obs.wrapper_kinds.add(K.PROFILE)
    obs.wrapper_kinds.discard(K.CONTROL)
    if obs.wrapper_kinds:
        return True
    obs.wrapper = False
    return False


def _chosen_parts(
    effects: MethodEffects, observing: list[int], hidden: set[str], copied: CopiedStatements, body_text: str
) -> dict[int, str]:
    """The observing statements a callback could run instead, each with its reason ("gated", "timing",
    "output"), plus every schedule update the user wrote ("schedule")."""
    statements = effects.statements
    chosen: dict[int, str] = {}
    delegation_line = statements[effects.delegation].line if effects.delegation is not None else None
    clocks = _clock_locals(effects)
    timing = delegation_line is not None and _brackets(effects, observing, delegation_line)
    cadence_possible = "torch_empty_cache_steps" in body_text  # once: the body may be long
    # Output the override must keep (it reads values only the method sees): the rest of its output
    # around ``super()`` (initialising the tracker run it writes to) stays with it.
    keeps_output = any(
        effects.kinds_under(i) & K.LOUD_KINDS and _reads(effects, i, hidden) for i in observing
    )
    for i in observing:
        kinds = effects.kinds_under(i)
        if kinds <= {K.CONTROL, K.NOOP, K.LOCAL}:
            continue  # control flags are TW203's
        if cadence_possible and _trainer_cadence(effects, i):
            continue
        if effects.gated_on_progress(i) and kinds & (K.OBSERVING_KINDS | {K.RECORD}):
            if not _reads(effects, i, hidden):  # values only this method sees cannot move to an event
                chosen[i] = (
                    "gated"  # output or metrics at a moment of the loop (a reset alone is bookkeeping)
                )
        elif timing and (K.CLOCK in kinds or statements[i].uses & clocks):
            chosen[i] = "timing"
        elif (
            delegation_line is not None
            and not keeps_output
            and kinds & K.LOUD_KINDS
            and _movable_output(effects, i, hidden)
            and not _incidental(effects, i, kinds)
        ):
            chosen[i] = "output"
    for i, s in enumerate(statements):
        if K.SCHEDULE in s.kinds and i not in copied and i not in chosen:
            chosen[i] = "schedule"
    return chosen


# ``EVENT_AT_RETURN``'s events receive the arguments and the ``super()`` result the code after the call
# reads (``logs`` in ``on_log``, ``metrics`` in ``on_evaluate``/``on_predict``): a record of them on ``self``
# (``self.history.append(logs)``) is kept as well by a callback that holds the trainer.
def _add_records(
    effects: MethodEffects, observing: list[int], hidden: set[str], chosen: dict[int, str]
) -> None:
    """Records on ``self`` (an attribute set, a container filled, a counter) after the ``super()`` call,
    reading only what the event receives: the move keeps them on the trainer, set at the event."""
    if effects.delegation is None:
        return
    end = effects.statements[effects.delegation].end_line
    for i in observing:
        kinds = effects.kinds_under(i)
        if i in chosen or not kinds & K.STATE_KINDS or effects.statements[i].line <= end:
            continue
        if kinds - (K.STATE_KINDS | {K.LOCAL, K.NOOP}):
            continue
        if _movable_output(effects, i, hidden):
            chosen[i] = "record"


def _record_parts(obs: Observation, effects: MethodEffects, chosen: dict[int, str]) -> None:
    """Add the chosen statements to ``obs`` in line order, with their reasons, kinds and gates."""
    for i in sorted(chosen):
        obs.parts.append(i)
        obs.reasons.add(chosen[i])
        kinds = effects.kinds_under(i) - {K.NOOP, K.LOCAL, K.CONTROL}
        obs.kinds |= kinds
        obs.kinds_by_reason.setdefault(chosen[i], set()).update(kinds)
        obs.gates |= effects.statements[i].gates


# Arguments a callback event receives under the same name (``model``; ``logs`` in ``on_log``, ``metrics`` in
# ``on_evaluate``): reading them does not pin code to the override.
# ``trial`` and ``epoch`` are in ``state`` (``state.trial_params``, ``state.epoch``); ``metric_key_prefix`` and
# ``ignore_keys`` name what ``evaluate`` computes, and ``on_evaluate``'s ``metrics`` carry the prefix.
# ``evaluation_loop``'s ``dataloader`` is the events' ``eval_dataloader`` (the loop sets it on the handler).
_EVENT_ARGUMENTS = frozenset({"self", "model", "logs", "metrics", "args", "kwargs", "trial", "epoch",
                              "metric_key_prefix", "ignore_keys", "ignore_keys_for_eval", "start_time",
                              "dataloader"})  # fmt: skip


def _own_arguments(fn: FunctionNode) -> set[str]:
    """The method's parameters no event receives (``state_dict``, ``output_dir`` of ``_save``, ``trial``):
    code that reads them can only run where the method runs (issue 33, cause 2)."""
    a = fn.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)} - _EVENT_ARGUMENTS


def _incidental(effects: MethodEffects, index: int, kinds: set[str]) -> bool:
    """A print or log line that narrates logic deciding *what* happens (issue 33, cause 3): nested in a
    statement that computes (a branch that changes the FSDP state-dict type), or, when it is only a
    print/log line, in a method that computes something of its own besides delegating."""
    if kinds & K.LOUD_KINDS - {K.PRINT}:
        return False  # tracker, file, gc or sample output is a job of its own, wherever it sits
    parent = effects.statements[index].parent
    if parent != -1:  # inside a block that computes something besides this line
        mine = set(effects.under(index))
        return any(j in effects.data for j in effects.under(parent) if j != parent and j not in mine)
    own = [
        i for i in effects.data
        if i != effects.delegation and effects.statements[i].parent == -1
        and not isinstance(effects.statements[i].node, ast.Return)
        and not _holds(effects, i, effects.delegation)
    ]  # fmt: skip
    return bool(own)


def _holds(effects: MethodEffects, outer: int, inner: int | None) -> bool:
    return inner is not None and inner in effects.under(outer)


def _is_wrapper(effects: MethodEffects, observing: list[int]) -> bool:
    """Delegates once with its own arguments, returns that result, and nothing else computes."""
    if effects.delegations != 1 or not effects.delegation_passthrough or effects.delegation is None:
        return False
    statements = effects.statements
    d = effects.delegation
    allowed = {d}
    parent = statements[d].parent
    while parent != -1:
        node = statements[parent].node
        if isinstance(node, (ast.With, ast.AsyncWith)):
            if K.PROFILE not in statements[parent].kinds:
                return False  # autocast, no_grad, ...: changes how it is computed
        elif not (isinstance(node, ast.Try) and not node.handlers):
            return False  # the delegation is conditional
        allowed.add(parent)
        parent = statements[parent].parent
    result = _result_name(statements[d].node)
    for i in effects.data - allowed:
        s = statements[i]
        if isinstance(s.node, ast.Return) and (
            s.node.value is None or (isinstance(s.node.value, ast.Name) and s.node.value.id == result)
        ):
            continue
        return False
    return True


def _result_name(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _clock_locals(effects: MethodEffects) -> set[str]:
    found: set[str] = set()
    for s in effects.statements:
        found |= {v for v in s.clock_vars if not v.startswith("self.")}
    return found


def _brackets(effects: MethodEffects, observing: list[int], line: int) -> bool:
    """Clock reads before and after the ``super()`` call: the method times it."""
    before = after = False
    for i in observing:
        for j in effects.under(i):
            s = effects.statements[j]
            if K.CLOCK in s.kinds or s.clock_vars:
                before |= s.line < line
                after |= s.line > line
    return before and after


# Names of the values no callback event receives (``print(inputs[...])``; a parameter of that name is one
# of ``_own_arguments`` already): a loop variable or a name the method does not define holds such a value;
# a local the method assigns (``outputs = super().evaluate(...)``) is judged by what it is assigned.
_PRIVATE_ARGUMENTS = frozenset(
    {"inputs", "batch", "generation_batch", "features", "epoch_iterator", "outputs", "tr_loss",
     "grad_norm"}
)  # fmt: skip


def _computed_locals(effects: MethodEffects, copied: CopiedStatements) -> set[str]:
    """Locals the method computes itself (defined by a data statement other than the ``super()``
    call): values no callback event receives. A statement copied from upstream that only rearranges
    values (``output = {**logs, "step": ...}`` of ``Trainer.log``, what ``state.log_history`` keeps) makes
    upstream's value: hidden only when it reads a hidden one (``_hidden_values`` follows those)."""
    out: set[str] = set()
    for i in effects.data:
        if i == effects.delegation:
            continue
        local = {d for d in effects.statements[i].defines if not d.startswith("self.")}
        # The two tests walk the statement: only one that defines a local needs them.
        if local and not (i in copied and _only_rearranges(effects.statements[i].node)):
            out |= local
    return out


def _only_rearranges(stmt: ast.stmt) -> bool:
    """No call but pure ones (``round``, ``dict``): the statement computes nothing new. Every node of
    it counts, nested blocks and definitions included; the first other call ends the walk."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            if name is None or K.call_kind(name) != K.LOCAL:
                return False
        stack.extend(child_nodes(node))
    return True


# Overrides whose ``super()`` result a callback event receives too (``logs`` in ``on_log``, ``metrics`` in
# ``on_evaluate``/``on_predict``, the loss in the logged ``loss``): output about that result can move.
_RESULT_VISIBLE = frozenset(
    {
        "log",
        "evaluate",
        "predict",
        "training_step",
        "train",
        "_save_checkpoint",
        "save_model",
    }
)


def _hidden_result(method: str, effects: MethodEffects) -> set[str]:
    """The locals holding the ``super()`` result when no event sees it (``prediction_step``'s logits)."""
    return set() if method in _RESULT_VISIBLE else effects.result_locals()


def _hidden_values(effects: MethodEffects, seeds: set[str]) -> set[str]:
    """The method's private arguments (``inputs``, ``dataloader``), ``seeds`` (values it computes itself),
    and every local derived from them (``batch = self.data_collator(dataloader.dataset.select(...))``):
    values no callback event receives (``self`` attributes filled with them in this method included).
    The ``super()`` result is left to ``_hidden_result``: it
    reads ``inputs`` too, and an event may see it all the same (the logged loss)."""
    hidden = set(seeds) | _private_names(effects)
    changed = True
    while changed:
        changed = False
        for i, s in enumerate(effects.statements):
            if i != effects.delegation and s.uses & hidden:
                # ``self.table.add_data(loss_value)``: the attribute holds it too, within this method
                new = set(s.defines) - hidden
                if new:
                    hidden |= new
                    changed = True
    return hidden


def _private_names(effects: MethodEffects) -> set[str]:
    """``_PRIVATE_ARGUMENTS`` but those only plain assignments define."""
    assigned: set[str] = set()
    other: set[str] = set()
    for s in effects.statements:
        names = s.defines & _PRIVATE_ARGUMENTS
        if names:
            (assigned if isinstance(s.node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else other).update(
                names
            )
    return set(_PRIVATE_ARGUMENTS - (assigned - other))


def _reads(effects: MethodEffects, index: int, names: set[str]) -> bool:
    return any(effects.statements[j].uses & names for j in effects.under(index))


def _movable_output(effects: MethodEffects, index: int, hidden: set[str]) -> bool:
    """Output around the ``super()`` call that a callback event could produce as well: it reads no
    value only the method sees (``_hidden_values``), and it is not on a path that replaces the
    delegation (an early return, or the other branch of the ``if`` that calls ``super()``)."""
    if _reads(effects, index, hidden):
        return False
    parent = effects.statements[index].parent
    while parent != -1:
        if any(K.RETURN in effects.statements[j].kinds for j in effects.under(parent)):
            return False
        parent = effects.statements[parent].parent
    return not _replaces_delegation(effects, index)


def _replaces_delegation(effects: MethodEffects, index: int) -> bool:
    """``if self.fsdp: <save it yourself, push> else: super().save_model(...)``: the statement sits in
    one branch of an ``if`` whose other branch calls ``super()``, or after an ``if ...: return super()...``
    (it runs only when ``super()`` did not), so it is part of the replacement."""
    if effects.delegation is None:
        return False
    theirs = effects.path(effects.delegation)
    d = effects.statements[effects.delegation]
    if isinstance(d.node, ast.Return) and len(theirs) > 1 and effects.statements[index].line > d.end_line:
        return True
    mine = effects.path(index)
    for child, parent in itertools.pairwise(mine):
        node = effects.statements[parent].node
        if not isinstance(node, ast.If) or parent not in theirs:
            continue
        other = theirs[theirs.index(parent) - 1]
        in_body = effects.statements[child].node in node.body
        return in_body != (effects.statements[other].node in node.body)
    return False


def _trainer_cadence(effects: MethodEffects, index: int) -> bool:
    """Gated by ``args.torch_empty_cache_steps``: the Trainer's own cache clearing, kept by overrides
    that copy ``training_step``; not a moment the user chose."""
    i = index
    while i != -1:
        node = effects.statements[i].node
        if isinstance(node, (ast.If, ast.While)) and any(
            (isinstance(n, ast.Attribute) and n.attr == "torch_empty_cache_steps")
            or (isinstance(n, ast.Name) and n.id == "torch_empty_cache_steps")
            for n in walk_expression(node.test)
        ):
            return True
        i = effects.statements[i].parent
    return False


def _driven_by_arguments(effects: MethodEffects, index: int) -> bool:
    """A flag set under ``if self.args.<x>_strategy ...``: the Trainer's own bookkeeping, copied."""
    parent = effects.statements[index].parent
    while parent != -1:
        node = effects.statements[parent].node
        if isinstance(node, ast.If):
            for n in ast.walk(node.test):
                name = dotted_name(n) if isinstance(n, ast.Attribute) else None
                if name and name.startswith("self.args.") and name.endswith("_strategy"):
                    return True
        parent = effects.statements[parent].parent
    return False


def spans(effects: MethodEffects, parts: list[int]) -> tuple[tuple[int, int], ...]:
    """The (first, last) lines of the statements ``parts`` names, in source order."""
    return tuple(sorted((effects.statements[i].line, effects.statements[i].end_line) for i in parts))


def line_list(effects: MethodEffects, parts: list[int]) -> str:
    """``1511, 1514–1518``: the lines the parts span."""
    spans = sorted((effects.statements[i].line, effects.statements[i].end_line) for i in parts)
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in merged)
