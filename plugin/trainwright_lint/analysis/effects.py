"""What a method does, statement by statement: the facts behind TW201, TW202 and TW203.

Every statement of the body (at any depth, nested functions excluded) gets its effect kinds
(``analysis.kinds``), the locals it defines and uses, the ``self`` attributes it writes, and the
gates of its enclosing conditions (``analysis.gates``). A worklist then splits the statements into
two sets:

- **data**: what the method computes. A delegation to ``super()``, a ``return``, a ``raise``, an
  unknown call, a mutation of an argument, a write to an attribute another method reads to compute
  something; plus, transitively, every statement that defines a local a data statement uses, and every
  compound statement that holds a data statement (its condition decides the data);
- **observing**: everything else that has an effect: clock reads, logging, printing, trackers, files,
  gc, samples, profiling, loop actions and control flags, and the locals that only feed those.

The worklist visits each statement once, so the analysis is linear in the method's size (a method of
10,000 gated ``if`` blocks is analysed in one pass, not 10,000).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from trainwright_lint.analysis import kinds as K
from trainwright_lint.analysis.gates import PROGRESS, gate_kinds
from trainwright_lint.syntax import (
    FUNCTION_TYPES,
    call_shape,
    decorator_names,
    dotted_name,
    is_docstring,
    is_self,
    node_fields,
    param_names,
    super_method,
)

_TRY_STAR = getattr(ast, "TryStar", ())
_MATCH = getattr(ast, "Match", ())
# Statements that hold others (a ``Statement`` each, with their body's statements under it): their own text
# is their body's.
COMPOUND = tuple(
    t
    for t in (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, _TRY_STAR, _MATCH)
    if t
)
_PROGRESS_READS = frozenset({"global_step", "epoch", "max_steps", "num_train_epochs"})
# Trainer methods whose whole job ends in dispatching one callback event: a re-implementation that
# fires it itself (``self.callback_handler.on_log(...)``) delegates as ``super().log(logs)`` would.
OWN_EVENTS = {"log": "on_log"}
# The event each of these methods fires as its ``super()`` call returns, with nothing of the Trainer's
# between (``on_evaluate`` at the end of ``evaluate``, ``on_predict`` of ``predict``, ``on_log`` of ``log``):
# code after the call runs at that event at the same point of training, with what it receives.
EVENT_AT_RETURN = {"log": "on_log", "evaluate": "on_evaluate", "predict": "on_predict"}
_READS_ONLY = re.compile(r"get_\w*_dataloader")
# ``self.log(table); self.state.log_history.pop()``: send a value to the trackers (``on_log``) without
# keeping it in ``state.log_history`` (TRL's sample tables). The pop undoes the log's own append, so
# right after ``self.log`` it is part of that upload, not a change of what the Trainer records.
_HISTORY_POP = "self.state.log_history.pop"
# Where that reading is proven: the evaluation loop's sample table, whose move the oracle checks
# (``tests/oracle/moves/sample_table_before_evaluation_loop.py``). Elsewhere the pop stays data.
_HISTORY_POP_METHODS = frozenset({"evaluation_loop"})


@dataclass(slots=True)
class Statement:
    """What one statement of a method does (its effect kinds), under which conditions, and which
    locals and attributes it defines and reads: the unit the TW2xx rules report on."""

    node: ast.stmt
    parent: int  # index of the enclosing compound statement, -1 at the top
    depth: int
    kinds: set[str] = field(default_factory=set)
    gates: frozenset[str] = frozenset()  # of enclosing conditions, and of its own when a condition
    defines: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)  # locals read by its own expressions
    attr_writes: set[str] = field(default_factory=set)
    children: list[int] = field(default_factory=list)
    clock_vars: set[str] = field(default_factory=set)  # locals / self attrs it assigns from the clock

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def end_line(self) -> int:
        return self.node.end_lineno or self.node.lineno


@dataclass
class MethodEffects:
    """The effect analysis of one method, computed once and shared by every rule: its statements
    in order (a parent before its children), those the returned value depends on, and its delegation."""

    statements: list[Statement]
    data: set[int]
    delegation: int | None  # index of the statement holding ``super().<same>(...)``
    delegation_passthrough: bool  # its arguments are the method's own parameters, unchanged
    delegations: int  # how many super().<same>() calls
    profiling_decorator: bool

    def observing(self) -> list[int]:
        """Statements with an observing effect (their own or nested) that are not data, outermost
        first: a gated block is one entry, not one per statement inside it."""
        has = [False] * len(self.statements)
        for i in range(len(self.statements) - 1, -1, -1):  # children come after their parent
            s = self.statements[i]
            if s.kinds & K.OBSERVING_KINDS or (s.kinds & K.STATE_KINDS and i not in self.data):
                has[i] = True
            if has[i] and s.parent != -1:
                has[s.parent] = True
        return [
            i
            for i, s in enumerate(self.statements)
            if has[i] and i not in self.data and (s.parent == -1 or s.parent in self.data)
        ]

    def result_locals(self) -> set[str]:
        """The locals the ``super()`` call's result is assigned to (``loss = super().training_step(...)``):
        what code after the call reads of the method's own work."""
        if self.delegation is None:
            return set()
        return {d for d in self.statements[self.delegation].defines if not d.startswith("self.")}

    def under(self, index: int) -> list[int]:
        """``index`` and every statement nested in it."""
        out, stack = [], [index]
        while stack:
            i = stack.pop()
            out.append(i)
            stack.extend(self.statements[i].children)
        return sorted(out)

    def path(self, index: int) -> list[int]:
        """``index`` and its enclosing statements, innermost first (the last is top-level)."""
        out = [index]
        while self.statements[out[-1]].parent != -1:
            out.append(self.statements[out[-1]].parent)
        return out

    def kinds_under(self, index: int) -> set[str]:
        found: set[str] = set()
        for i in self.under(index):
            found |= self.statements[i].kinds
        return found

    def gated_on_progress(self, index: int) -> frozenset[str]:
        return self.statements[index].gates & PROGRESS

    def delegates_always(self) -> bool:
        """Every run of the method calls ``super()``: the delegation is nested only in ``with`` blocks,
        ``try`` bodies and ``if`` branches whose other branch delegates too, and no ``return`` comes
        before it. Only then does the method's own event fire whenever the code around it runs
        (``if self.args.report_to: super().log(logs)`` fires ``on_log`` on one path only)."""
        if self.delegation is None:
            return False
        d = self.statements[self.delegation]
        if any(K.RETURN in s.kinds and s.line < d.line for s in self.statements):
            return False
        child = self.delegation
        while self.statements[child].parent != -1:
            parent = self.statements[child].parent
            node = self.statements[parent].node
            if isinstance(node, ast.If):
                other = node.orelse if self.statements[child].node in node.body else node.body
                branch = [c for c in self.statements[parent].children if self.statements[c].node in other]
                if not any(K.DELEGATE in self.kinds_under(c) for c in branch):
                    return False
            elif isinstance(node, ast.Try):
                if self.statements[child].node not in node.body:
                    return False
            elif not isinstance(node, (ast.With, ast.AsyncWith)):
                return False  # a loop runs it any number of times
            child = parent
        return True


AttrIsData = Callable[[str], bool]


class _Collector:
    def __init__(
        self,
        method: str,
        params: Collection[str],
        clock_attrs: Collection[str],
        counters: Collection[str],
    ) -> None:
        self.method = method
        self.params = set(params) - {"self"}
        self.clocks: set[str] = {f"self.{a}" for a in clock_attrs}
        self.counters = set(counters)
        self.statements: list[Statement] = []
        self.delegations: list[tuple[int, ast.Call]] = []
        event = OWN_EVENTS.get(method)
        self.own_event = f"self.callback_handler.{event}" if event else None

    def block(self, body: list[ast.stmt], parent: int, depth: int, gates: frozenset[str]) -> list[int]:
        out = []
        for k, stmt in enumerate(body):
            if isinstance(stmt, (FUNCTION_TYPES, ast.ClassDef)):
                index = self.add(stmt, parent, depth, gates)
                self.statements[index].defines.add(stmt.name)
                self.statements[index].kinds.add(K.LOCAL)
                out.append(index)
                continue
            role = _history_role(body, k) if self.method in _HISTORY_POP_METHODS else None
            if role == K.TRACKER:  # the pop: the log's trackers-only half, nothing of its own to analyse
                index = self.add(stmt, parent, depth, gates)
            else:
                index = self.statement(stmt, parent, depth, gates)
            if role is not None:
                self.statements[index].kinds.add(role)
            out.append(index)
        return out

    def add(self, stmt: ast.stmt, parent: int, depth: int, gates: frozenset[str]) -> int:
        self.statements.append(Statement(stmt, parent, depth, gates=gates))
        return len(self.statements) - 1

    def statement(self, stmt: ast.stmt, parent: int, depth: int, gates: frozenset[str]) -> int:
        if isinstance(stmt, (ast.If, ast.While)):
            own = gates | gate_kinds(stmt.test, self.clocks, self.counters)
            index = self.add(stmt, parent, depth, own)
            self.expression(index, stmt.test, observe=False)  # a clock read in a test is the gate
            s = self.statements[index]
            s.children = self.block(stmt.body, index, depth + 1, own) + self.block(
                stmt.orelse, index, depth + 1, own
            )
            return index
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            index = self.add(stmt, parent, depth, gates)
            self.expression(index, stmt.iter)
            self.targets(index, [stmt.target], None)
            s = self.statements[index]
            s.children = self.block(stmt.body, index, depth + 1, gates) + self.block(
                stmt.orelse, index, depth + 1, gates
            )
            return index
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            index = self.add(stmt, parent, depth, gates)
            for item in stmt.items:
                expr = item.context_expr
                name = dotted_name(expr.func if isinstance(expr, ast.Call) else expr) or ""
                if K.is_profiling_name(name):
                    self.statements[index].kinds.add(K.PROFILE)
                    self.expression(index, expr, classify=False)
                elif name == "open":
                    self.statements[index].kinds.add(K.FILE)
                    self.expression(index, expr, classify=False)
                else:
                    self.expression(index, expr, classify=False)
                if item.optional_vars is not None:
                    self.targets(index, [item.optional_vars], None)
            self.statements[index].children = self.block(stmt.body, index, depth + 1, gates)
            return index
        if isinstance(stmt, ast.Try) or (_TRY_STAR and isinstance(stmt, _TRY_STAR)):
            index = self.add(stmt, parent, depth, gates)
            children = self.block(stmt.body, index, depth + 1, gates)
            for handler in stmt.handlers:
                if handler.type is not None:
                    self.expression(index, handler.type, classify=False)
                if handler.name:
                    self.statements[index].defines.add(handler.name)
                children += self.block(handler.body, index, depth + 1, gates)
            children += self.block(stmt.orelse, index, depth + 1, gates)
            children += self.block(stmt.finalbody, index, depth + 1, gates)
            self.statements[index].children = children
            return index
        if _MATCH and isinstance(stmt, _MATCH):
            index = self.add(stmt, parent, depth, gates)
            self.expression(index, stmt.subject)
            self.statements[index].kinds.add(K.UNKNOWN)  # patterns bind names in ways we do not follow
            for case in stmt.cases:
                self.statements[index].children += self.block(case.body, index, depth + 1, gates)
            return index
        index = self.add(stmt, parent, depth, gates)
        self.simple(index, stmt)
        return index

    # -- simple statements -------------------------------------------------------------------------

    def simple(self, index: int, stmt: ast.stmt) -> None:
        s = self.statements[index]
        if isinstance(stmt, ast.Pass) or is_docstring(stmt):
            s.kinds.add(K.NOOP)
        elif isinstance(stmt, ast.Expr):
            value = stmt.value
            if isinstance(value, (ast.Yield, ast.YieldFrom)):
                s.kinds.add(K.YIELD)
                self.expression(index, value)
            elif isinstance(value, ast.Await) and isinstance(value.value, ast.Call):
                self.call_statement(index, value.value)
            elif isinstance(value, ast.Call):
                self.call_statement(index, value)
            else:
                self.expression(index, value)
                s.kinds.add(K.LOCAL)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            assigned = stmt.value  # None in ``x: int``
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            facts = self.expression(index, assigned) if assigned is not None else (False, False, False)
            self.targets(index, targets, assigned, augmented=isinstance(stmt, ast.AugAssign), facts=facts)
            if isinstance(stmt, ast.AugAssign):
                for t in targets:  # x += 1 reads x too
                    if isinstance(t, ast.Name):
                        s.uses.add(t.id)
        elif isinstance(stmt, ast.Return):
            s.kinds.add(K.RETURN)
            if stmt.value is not None:
                self.expression(index, stmt.value)
        elif isinstance(stmt, (ast.Raise, ast.Assert)):
            s.kinds.add(K.RAISE)
            for child in ast.iter_child_nodes(stmt):
                self.expression(index, child)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            s.kinds.add(K.NOOP)
            for alias in stmt.names:
                s.defines.add((alias.asname or alias.name).split(".", 1)[0])
        elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
            s.kinds.add(K.UNKNOWN)
        elif isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    s.defines.add(t.id)
                    s.kinds.add(K.LOCAL)
                else:
                    self.expression(index, t)
                    s.kinds.add(K.UNKNOWN)
        else:  # Break, Continue and anything new: part of the control flow
            s.kinds.add(K.UNKNOWN if not isinstance(stmt, (ast.Break, ast.Continue)) else K.LOCAL)

    def _is_model(self, owner: str) -> bool:
        """``model``, ``model.module``, ``self.model``: the model being trained, which callback
        events receive (``kwargs["model"]``)."""
        parts = owner.split(".")
        if parts[0] == "self":
            parts = parts[1:]
            return bool(parts) and parts[0] == "model" and all(p == "module" for p in parts[1:])
        return parts[0] == "model" and parts[0] in self.params and all(p == "module" for p in parts[1:])

    def _schedules_model(self, func: ast.Attribute, call: ast.Call) -> bool:
        """A ``set_*`` call on the model whose arguments follow training progress and read no
        parameter of the method: a schedule, not a change of what the step computes."""
        owner = dotted_name(func.value)
        if owner is None or not self._is_model(owner) or not (call.args or call.keywords):
            return False
        progress = False
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for n in ast.walk(arg):
                if isinstance(n, ast.Name) and n.id in self.params:
                    return False
                if isinstance(n, ast.Attribute) and (
                    n.attr in _PROGRESS_READS or (is_self(n.value) and n.attr in self.counters)
                ):
                    progress = True
        return progress

    def call_statement(self, index: int, call: ast.Call) -> None:
        s = self.statements[index]
        self.expression(index, call)
        if K.DELEGATE in s.kinds or K.SUPER_OTHER in s.kinds:
            return
        func = call.func
        name = dotted_name(func)
        kind = _call_kind(name) if name else None
        if kind is not None and kind != K.LOCAL:
            return  # the expression walk recorded it
        if isinstance(func, ast.Attribute):
            base = func.value
            while isinstance(base, (ast.Attribute, ast.Subscript, ast.Call)):
                base = base.func if isinstance(base, ast.Call) else base.value
            if isinstance(base, ast.Name):
                if base.id == "self":
                    owner = _first_attribute(func)
                    if owner is not None and func.attr in K.LOCAL_MUTATORS and owner != func.attr:
                        s.kinds.add(K.RECORD)
                        s.attr_writes.add(owner)
                        s.defines.add(f"self.{owner}")
                        return
                elif base.id in self.params:
                    if func.attr.startswith("set_") and self._schedules_model(func, call):
                        s.kinds.add(K.SCHEDULE)  # ``model.set_gumbel_temperature(f(step))``
                        return
                    if func.attr not in K.PURE_METHODS:
                        s.kinds.add(K.PARAM_MUTATION)
                    return
                else:
                    # a method of a local value (``table.add_data(...)``, ``fig.savefig``): it uses
                    # and changes that local; it is data exactly when the local is.
                    s.defines.add(base.id)
                    s.kinds.add(K.LOCAL)
                    return
        if kind == K.LOCAL and not isinstance(func, ast.Attribute):
            s.kinds.add(K.LOCAL)  # a pure function called for nothing (``len(x)``)
            return
        # A method called as a statement is called for its effect, even one that is pure on tensors
        # (``self.model.to("cpu")`` moves a module in place).
        s.kinds.add(K.UNKNOWN)

    def targets(
        self,
        index: int,
        targets: Sequence[ast.expr],
        value: ast.expr | None,
        augmented: bool = False,
        facts: tuple[bool, bool, bool] = (False, False, False),
    ) -> None:
        """Record what assigning ``value`` to ``targets`` defines and which effect kind the write has.

        ``facts`` are the value's (reads the clock, reads progress, reads a parameter), from
        ``expression``: they tell a timer or a schedule from other state."""
        s = self.statements[index]
        for t in targets:
            if isinstance(t, ast.Name):
                self._name_target(s, t.id, clock=facts[0])
            elif isinstance(t, (ast.Tuple, ast.List)):
                self.targets(index, list(t.elts), None, facts=facts)
            elif isinstance(t, ast.Starred):
                self.targets(index, [t.value], None, facts=facts)
            elif isinstance(t, ast.Attribute) and is_self(t.value):
                self._self_attribute_target(s, t.attr, value, augmented, facts)
            elif isinstance(t, (ast.Attribute, ast.Subscript)):
                self._nested_target(index, t, value, facts)
            else:
                s.kinds.add(K.UNKNOWN)

    def _name_target(self, s: Statement, name: str, clock: bool) -> None:
        """A local: defined here, and a clock for later gates when it is assigned from the clock."""
        s.defines.add(name)
        s.kinds.add(K.LOCAL)
        if clock:
            s.clock_vars.add(name)
            self.clocks.add(name)

    def _self_attribute_target(
        self,
        s: Statement,
        attr: str,
        value: ast.expr | None,
        augmented: bool,
        facts: tuple[bool, bool, bool],
    ) -> None:
        """``self.x = ...``: a timer (from the clock), a step counter (``+= 1``), a schedule (computed
        from progress) or plain state; ``self.x`` flows like a local inside the method."""
        s.attr_writes.add(attr)
        s.defines.add(f"self.{attr}")
        if augmented:
            s.uses.add(f"self.{attr}")
        if facts[0]:
            s.kinds.add(K.CLOCK)
            s.clock_vars.add(f"self.{attr}")
            self.clocks.add(f"self.{attr}")
        elif augmented and isinstance(value, ast.Constant):
            s.kinds.add(K.COUNTER)
        elif _is_schedule_value(value, facts):
            s.kinds.add(K.SCHEDULE)  # computed from progress: ``1 - step / max_steps``, ``min(...)``
        else:
            s.kinds.add(K.ATTRIBUTE)

    def _nested_target(
        self,
        index: int,
        t: ast.Attribute | ast.Subscript,
        value: ast.expr | None,
        facts: tuple[bool, bool, bool],
    ) -> None:
        """``a.b = ...`` or ``a[k] = ...``: a control flag, a per-step schedule of a model attribute, or
        a change of what ``a`` is (a record on ``self``, a mutated argument, a changed local)."""
        s = self.statements[index]
        name = dotted_name(t) if isinstance(t, ast.Attribute) else None
        if name is not None and name.startswith("self.control.should_"):
            s.kinds.add(K.CONTROL)
            return
        if name is not None and self._is_model(name.rsplit(".", 1)[0]) and _is_schedule_value(value, facts):
            # ``model.temperature = f(global_step)``: a per-step schedule of a model attribute,
            # which ``on_step_begin`` can set as well (its kwargs carry the model).
            s.kinds.add(K.SCHEDULE)
            return
        base = t.value
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        if isinstance(t, ast.Subscript):
            self.expression(index, t.slice, classify=False)
        if is_self(base):
            owner = _first_attribute(t)
            s.kinds.add(K.RECORD)
            if owner:
                s.attr_writes.add(owner)
                s.defines.add(f"self.{owner}")
        elif isinstance(base, ast.Name) and base.id in self.params:
            s.kinds.add(K.PARAM_MUTATION)
        elif isinstance(base, ast.Name):
            s.defines.add(base.id)
            s.uses.add(base.id)
            s.kinds.add(K.LOCAL)
        else:
            s.kinds.add(K.UNKNOWN)

    def expression(
        self, index: int, node: ast.AST, classify: bool = True, observe: bool = True
    ) -> tuple[bool, bool, bool]:
        """Record the locals read and the calls made by one expression, in one pass.

        Returns (reads the clock, reads training progress, reads a parameter), which assignments use
        to tell a timer or a schedule from other state."""
        s = self.statements[index]
        uses = s.uses
        clock = progress = param = False
        params = self.params
        stack = [node]
        pop, push = stack.pop, stack.append
        while stack:
            current = pop()
            # Dispatch on ``type(...) is`` (the hot path: faster than isinstance), which mypy does not
            # narrow on: the attributes read below are the node type's (``type: ignore[attr-defined]``).
            kind = type(current)
            if kind is ast.Name:
                if type(current.ctx) is ast.Load:  # type: ignore[attr-defined]
                    uses.add(current.id)  # type: ignore[attr-defined]
                    if current.id in params:  # type: ignore[attr-defined]
                        param = True
                continue
            if kind is ast.Attribute:
                value = current.value  # type: ignore[attr-defined]
                if current.attr in _PROGRESS_READS:  # type: ignore[attr-defined]
                    progress = True
                if type(value) is ast.Name and value.id == "self":
                    # ``self.x`` flows like a local inside the method: a write read by a data
                    # statement of the same method is data (``self._buf = ...``; ``return self._buf[i]``).
                    if type(current.ctx) is ast.Load:  # type: ignore[attr-defined]
                        uses.add("self." + current.attr)  # type: ignore[attr-defined]
                    continue
                push(value)
                continue
            if kind is ast.Call:
                name = dotted_name(current.func)  # type: ignore[attr-defined]
                if name is not None and _is_clock_name(name):
                    clock = True
                if classify:
                    self._classify_call(index, current, name, observe)  # type: ignore[arg-type]
            elif kind is ast.NamedExpr and type(current.target) is ast.Name:  # type: ignore[attr-defined]
                s.defines.add(current.target.id)  # type: ignore[attr-defined]
            elif kind is ast.Lambda:
                push(current.body)  # type: ignore[attr-defined]
                continue
            for field_name in node_fields(kind, _SKIPPED_FIELDS):  # type: ignore[arg-type]  # see child_nodes
                child = getattr(current, field_name, None)
                if child is None:
                    continue
                if type(child) is list:
                    for item in child:
                        if isinstance(item, ast.AST) and not isinstance(item, _NOT_ENTERED):
                            push(item)
                elif isinstance(child, ast.AST) and not isinstance(child, _NOT_ENTERED):
                    push(child)
        return clock, progress, param

    def _classify_call(self, index: int, call: ast.Call, name: str | None, observe: bool) -> None:
        """The effect kind a call met inside an expression gives its statement: a delegation to
        ``super()`` (or the dispatch of the method's own event, which stands for it), another
        ``super()`` method, or (when ``observe``) the kind of a known call."""
        s = self.statements[index]
        method = super_method(call)
        if method is not None:
            if method == self.method:
                s.kinds.add(K.DELEGATE)
                self.delegations.append((index, call))
            elif not _READS_ONLY.fullmatch(method):
                s.kinds.add(K.SUPER_OTHER)
            # ``super().get_train_dataloader()`` only builds a loader: its value is data
            # exactly when what it feeds is (a table of examples from it is output).
        elif name is not None and name == self.own_event:
            # A re-implementation that dispatches the method's own event (a ``log`` copied
            # from an old release firing ``on_log``): the dispatch stands for ``super()``.
            s.kinds.add(K.DELEGATE)
            self.delegations.append((index, call))
        elif name is not None and observe:
            kind = _call_kind(name)
            if kind is not None and kind != K.LOCAL:
                s.kinds.add(kind)


# A copy of a value (``self._last_step = self.state.global_step``) is bookkeeping, not a schedule.
_PLAIN_VALUES = (ast.Name, ast.Attribute, ast.Constant, ast.Subscript)
_NOT_ENTERED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})


def _history_role(body: list[ast.stmt], k: int) -> str | None:
    """What ``body[k]`` does to ``state.log_history`` in the evaluation loop: ``TRACKER`` for the bare pop
    right after ``self.log`` (with it, an upload to the trackers), ``HISTORY`` for a ``self.log`` whose
    entry stays (not followed by that pop), ``None`` otherwise."""
    stmt = body[k]
    if k and _calls(stmt, _HISTORY_POP, bare=True) and _calls(body[k - 1], "self.log"):
        return K.TRACKER
    if _calls(stmt, "self.log") and not (k + 1 < len(body) and _calls(body[k + 1], _HISTORY_POP, bare=True)):
        return K.HISTORY
    return None


def _calls(stmt: ast.stmt, name: str, bare: bool = False) -> bool:
    """``stmt`` is a call of ``name`` (``self.log({...})``) whose value is unused; with ``bare``, one
    without arguments."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    return dotted_name(call.func) == name and not (bare and (call.args or call.keywords))


@lru_cache(maxsize=8192)
def _call_kind(name: str) -> str | None:
    return K.call_kind(name)


@lru_cache(maxsize=8192)
def _is_clock_name(name: str) -> bool:
    return name in K.CLOCK_CALLS or name.endswith((".perf_counter", ".monotonic"))


def _is_schedule_value(value: ast.expr | None, facts: tuple[bool, bool, bool]) -> bool:
    """A value computed from training progress without reading a parameter, and more than a copy of
    one value: what an attribute set per step to follow a schedule is assigned."""
    _, progress, reads_params = facts
    return value is not None and progress and not reads_params and not isinstance(value, _PLAIN_VALUES)


# Container look-ups a record chains through: ``self.x.setdefault(k, []).append(v)`` fills ``self.x``.
_LOOKUPS = frozenset({"setdefault", "get"})


def _first_attribute(node: ast.AST) -> str | None:
    """``x`` for ``self.x``, ``self.x[...]``, ``self.x.y.append``, ``self.x.setdefault(k, []).append``."""
    chain: list[ast.AST] = []
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Attribute) and node.func.attr in _LOOKUPS):
                return None
            node = node.func
        chain.append(node)
        node = node.value
    if not is_self(node) or not chain:
        return None
    last = chain[-1]
    return last.attr if isinstance(last, ast.Attribute) else None


def analyse(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    attr_is_data: AttrIsData,
    clock_attrs: Collection[str] = (),
    counters: Collection[str] = (),
) -> MethodEffects:
    """The effects of ``fn``. ``attr_is_data(x)`` says whether ``self.x`` is read elsewhere to compute
    something (then writing it is data); ``clock_attrs``/``counters`` are ``self`` attributes the class
    uses as timers / step counters."""
    params = param_names(fn)
    c = _Collector(fn.name, params, clock_attrs, counters)
    c.block(fn.body, -1, 0, frozenset())
    statements = c.statements
    data = _data_closure(statements, _data_seeds(statements, attr_is_data))
    data |= _called_for_effect(statements, data)
    delegation = c.delegations[0][0] if c.delegations else None
    passthrough = bool(c.delegations) and all(_passthrough(call, params) for _, call in c.delegations)
    decorators = decorator_names(fn)
    return MethodEffects(
        statements=statements,
        data=data,
        delegation=delegation,
        delegation_passthrough=passthrough,
        delegations=len(c.delegations),
        profiling_decorator=any(K.is_profiling_name(d) for d in decorators),
    )


def _data_seeds(statements: list[Statement], attr_is_data: AttrIsData) -> list[int]:
    """The statements that are data by themselves (a data kind, or a write to an attribute another
    method reads to compute something), in order: where the worklist of ``_data_closure`` starts."""
    seeds: list[int] = []
    for i, s in enumerate(statements):
        if s.kinds & K.DATA_KINDS:
            seeds.append(i)
        elif s.attr_writes and any(attr_is_data(a) for a in s.attr_writes):
            seeds.append(i)  # feeds another method's computation (a schedule too: TW201 reports it as one)
    return seeds


def _data_closure(statements: list[Statement], seeds: list[int]) -> set[int]:
    """``seeds`` plus, transitively, the compound statements holding a data statement and the definers
    of every local a data statement uses. Each statement enters the worklist once and each name is
    expanded once, so the closure is linear in the method's size."""
    definers: dict[str, list[int]] = {}
    for i, s in enumerate(statements):
        for name in s.defines:
            definers.setdefault(name, []).append(i)
    data: set[int] = set()
    work: list[int] = []

    def mark(i: int) -> None:
        if i not in data:
            data.add(i)
            work.append(i)

    for i in seeds:
        mark(i)
    expanded: set[str] = set()  # names whose definers are all marked already: linear in the size
    while work:
        i = work.pop()
        s = statements[i]
        if s.parent != -1:
            mark(s.parent)
        for name in s.uses - expanded:
            expanded.add(name)
            for d in definers.get(name, ()):
                mark(d)
    return data


def _called_for_effect(statements: list[Statement], data: set[int]) -> set[int]:
    """Statements outside ``data`` that define a local nothing uses from an unknown call: the call is
    there for its effect, so the statement is data (found after the closure, and not expanded)."""
    used: set[str] = set()
    for s in statements:
        used |= s.uses
    found: set[int] = set()
    for i, s in enumerate(statements):
        unused_local = s.kinds == {K.LOCAL} and s.defines and not (s.defines & used) and not s.children
        if (
            i not in data
            and unused_local
            and any(isinstance(n, ast.Call) and not _pure_call(n) for n in ast.walk(s.node))
        ):
            found.add(i)
    return found


def _pure_call(call: ast.Call) -> bool:
    name = dotted_name(call.func)
    return name is not None and K.call_kind(name) is not None


def _passthrough(call: ast.Call, params: tuple[str, ...]) -> bool:
    """The super() call passes the override's own parameters, unchanged."""
    names = set(params) - {"self"}
    for arg in call.args:
        value = arg.value if isinstance(arg, ast.Starred) else arg
        if not (isinstance(value, ast.Name) and value.id in names):
            return False
    for kw in call.keywords:
        if not (isinstance(kw.value, ast.Name) and kw.value.id in names):
            return False
    return call_shape(call)[0] >= 0
