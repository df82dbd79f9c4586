"""``trainwright fix --suggest``: turn a TW2xx finding into a ready ``TrainerCallback`` to paste.

TW201/TW202/TW203 flag timing or side-effect logic inside a Trainer override. The fix is a move, not
an edit: the code goes to a callback event, where ``self.state`` is the ``state`` argument,
``self.args`` is ``args``, ``self.control`` is ``control`` and ``self.model`` (``optimizer``,
``lr_scheduler``, ``processing_class``, dataloaders) arrive as event keywords. Suggestions are printed,
never written: the logic needs a human to check what else it reads from the Trainer.

Two translations make the moved code mean what it meant in the override:

* a **wrapper** (TW202) has code before and after its ``super()`` call; the part before goes to the
  begin event and the part after to the end event (``on_step_begin`` / ``on_step_end`` for a
  ``training_step`` wrapper), and a local assigned before and read after (``start = time.perf_counter()``)
  becomes an attribute of the callback, so it survives from one event to the other;
* ``self.log(values)`` belonged to the Trainer; in a callback the values are kept and merged into the
  next training log line in ``on_log``, which is where a callback adds to the logs.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import libcst as cst

from trainwright_lint.finding import Finding
from trainwright_lint.rules import RULES, suggested
from trainwright_lint.rules.base import MOVE_WRAPPER
from trainwright_lint.suggest_inputs import attribute_defaults, local_assignments, recomputed

# The rules that declare a ``suggestion``, for the language server's code actions (``suggested()``
# is the same list, read from the registry when asked).
SUGGESTED_CODES = suggested()
_EVENT = re.compile(r"\bon_[a-z_]+\b")
_EVENT_ARGUMENTS = {"state": "state", "args": "args", "control": "control"}
_EVENT_KWARGS = frozenset(
    {"model", "optimizer", "lr_scheduler", "processing_class", "train_dataloader", "eval_dataloader"}
)
PENDING_LOGS = "pending_logs"
# How the override asked "am I the main process"; a callback reads `state.is_world_process_zero`.
_MAIN_PROCESS = frozenset({"self.is_world_process_zero", "self.accelerator.is_main_process"})
_MAIN_PROCESS_FLAGS = frozenset({"self.accelerator.is_main_process"})


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


class _FromTrainer(cst.CSTTransformer):
    """Rewrite override code for a callback event.

    ``self.state`` -> ``state``, ``self.model`` -> ``kwargs["model"]``, ``self.log(x)`` ->
    ``self.pending_logs.update(x)`` (``logs.update(x)`` in ``on_log`` itself), a carried local
    ``start`` -> ``self.start``; records the other ``self.x`` it reads, which the callback does not have.
    """

    def __init__(self, carried: frozenset[str], parameters: frozenset[str], event: str) -> None:
        super().__init__()
        self.carried = carried
        self.parameters = parameters
        self.event = event
        self.event_arguments = frozenset({"logs"}) if event == "on_log" else frozenset()
        self.unresolved: set[str] = set()
        self.uses_log = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if _dotted(func) in _MAIN_PROCESS and not updated.args:  # self.is_world_process_zero()
            return cst.parse_expression("state.is_world_process_zero")
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and func.attr.value == "log"
        ):
            if self.event == "on_log":  # the log line being written is at hand
                return updated.with_changes(func=cst.parse_expression("logs.update"))
            self.uses_log = True
            return updated.with_changes(func=cst.parse_expression(f"self.{PENDING_LOGS}.update"))
        return updated

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return _dotted(node) not in _MAIN_PROCESS_FLAGS  # replaced whole: its parts are not read

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        # `x.model`: the attribute name is not a variable; undo what leave_Name did to it.
        updated = updated.with_changes(attr=original.attr)
        if _dotted(original) in _MAIN_PROCESS_FLAGS:  # the callback's view of "am I rank 0"
            return cst.parse_expression("state.is_world_process_zero")
        if not (isinstance(updated.value, cst.Name) and updated.value.value == "self"):
            return updated
        attr = updated.attr.value
        if attr in _EVENT_ARGUMENTS:
            return cst.Name(_EVENT_ARGUMENTS[attr])
        if attr in _EVENT_KWARGS:
            return cst.parse_expression(f'kwargs["{attr}"]')
        if attr not in self.carried and attr not in ("log", PENDING_LOGS):
            self.unresolved.add(attr)
        return updated

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        name = updated.value
        if name in self.carried:
            return cst.Attribute(value=cst.Name("self"), attr=cst.Name(name))
        if name in self.parameters:
            if name in self.event_arguments:
                return updated
            if name in _EVENT_KWARGS:
                return cst.parse_expression(f'kwargs["{name}"]')
        return updated


_GATED = re.compile(r"`(on_[a-z_]+)` \(`control\.(should_[a-z_]+)`\)")


def _gates(finding: Finding) -> dict[str, str]:
    """Events the message says to gate on a control flag: ``on_step_end`` (``control.should_evaluate``)
    stands for "the step end where the Trainer is about to evaluate", not every step end."""
    return {event: flag for event, flag in _GATED.findall(finding.message)}


def _gated(body: str, flag: str) -> str:
    return f"if control.{flag}:\n" + textwrap.indent(body, "    ")


def _events(finding: Finding) -> list[str]:
    """The events the message names, in order; of ``on_step_end or on_log`` the first is taken."""
    found = list(dict.fromkeys(_EVENT.findall(re.sub(r" or `?on_[a-z_]+`?", "", finding.message))))
    return found or ["on_step_end"]


def _find_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == line:
            return node
    return None


def _enclosing_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        inside = node.lineno <= line <= (node.end_lineno or node.lineno)
        if inside and (best is None or node.lineno > best.lineno):  # the innermost one
            best = node
    return best


def _named_enclosing(tree: ast.Module, finding: Finding) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name == finding.method
            and node.lineno <= finding.line <= (node.end_lineno or node.lineno)
        ):
            return node
    return None


def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef | None) -> frozenset[str]:
    if func is None:
        return frozenset()
    a = func.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return frozenset(n for n in names if n != "self")


def _source(lines: list[str], statements: Sequence[ast.stmt]) -> str:
    return "\n".join(
        textwrap.dedent("\n".join(lines[s.lineno - 1 : (s.end_lineno or s.lineno)])) for s in statements
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _calls_super(source: str, statement: ast.stmt) -> bool:
    return "super()" in (ast.get_source_segment(source, statement) or "")


def _assigned_names(statements: Sequence[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def _unread_assignments(statements: Sequence[ast.stmt]) -> set[str]:
    """Locals plainly assigned (``x = ...``, ``with ... as x``) that these statements never read."""
    assigned: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
                targets = [node.target]
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                targets = [node.optional_vars]
            assigned |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return assigned - _read_names(statements)


def _read_names(statements: Sequence[ast.stmt]) -> set[str]:
    return {
        node.id
        for statement in statements
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _moved_statements(
    func: ast.FunctionDef | ast.AsyncFunctionDef, finding: Finding, source: str
) -> list[ast.stmt]:
    """The override's top-level statements to move, in order, never its ``super()`` call or ``return``.

    TW201/TW202 name the statements that belong in a callback (``finding.moved``); one nested in a
    block that also holds other code moves with that whole block (its condition is part of the
    logic: ``if step % n == 0: ...``). Without spans, the block holding the flagged line moves (TW203).
    """
    body = [s for s in func.body if not _is_docstring(s)]
    spans = finding.moved or ((finding.line, finding.line),)
    picked = []
    for statement in body:
        end = statement.end_lineno or statement.lineno
        touched = any(first <= end and statement.lineno <= last for first, last in spans)
        if touched and not _calls_super(source, statement) and not isinstance(statement, ast.Return):
            picked.append(statement)
    return picked


Plan = tuple[list[tuple[str, str]], frozenset[str], frozenset[str], ast.FunctionDef | ast.AsyncFunctionDef]


def _plan(source: str, finding: Finding) -> Plan | None:
    """(event, code) pairs to move, the locals carried between events, the override's parameters,
    and the override.

    Code before the override's ``super()`` call goes to the first event the finding names and code
    after it to the last (``on_step_begin`` / ``on_step_end``); a local assigned before and read after
    is carried on the callback. A ``log`` override's code reads the log line, so it runs in ``on_log``.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    events = _events(finding)
    # The finding sits on the def or on the first statement it is about: either way the override is
    # the function named by the finding that encloses that line.
    func = (
        _find_function(tree, finding.line)
        or _named_enclosing(tree, finding)
        or _enclosing_function(tree, finding.line)
    )
    if func is None:
        return None
    if RULES[finding.code].suggestion == MOVE_WRAPPER and not finding.moved:
        finding_body = [s for s in func.body if not _is_docstring(s)]
        moved = [s for s in finding_body if not _calls_super(source, s) and not isinstance(s, ast.Return)]
    else:
        moved = _moved_statements(func, finding, source)
    if not moved:
        return None
    split = next((s.lineno for s in func.body if _calls_super(source, s)), None)
    before = [s for s in moved if split is not None and s.lineno < split]
    after = [s for s in moved if split is None or s.lineno > split]
    if finding.method == "log":  # a log override reads the log line
        begin = end = "on_log"
    else:
        begin, end = events[0], events[-1]
        if begin == end and before and after:
            # Code before and after the super() call with one event to hold both (no begin event around
            # `prediction_step`): a timer would measure nothing. No correct callback exists.
            return None
    if begin == end or not before or not after:  # one event: everything runs there, in order
        event = end if after else begin
        return (
            [(event, _source(lines, moved))],
            frozenset(_unread_assignments(moved)),
            _parameters(func),
            func,
        )
    # A local assigned before and read after lives on the callback between the two events; so does
    # one a part assigns and never reads (its reader stayed in the override), so no value is lost.
    carried = (_assigned_names(before) & _read_names(after)) | _unread_assignments(before)
    carried |= _unread_assignments(after)
    moves = [(begin, _source(lines, before)), (end, _source(lines, after))]
    return moves, frozenset(carried), _parameters(func), func


@dataclass
class _Move:
    """One override's code on its way to a callback: what every event body is translated against."""

    source: str
    finding: Finding
    func: ast.FunctionDef | ast.AsyncFunctionDef
    carried: frozenset[str]  # locals kept on the callback between its events
    parameters: frozenset[str]  # the override's parameters
    transformers: list[_FromTrainer]  # one per translated body: what each left unresolved
    owner: str = "Trainer"
    module_imports: set[str] = field(default_factory=set)  # names the file's imports bind
    settable: dict[str, str | None] = field(default_factory=dict)  # what the Trainer subclass sets on itself
    defined_at_top: set[str] = field(default_factory=set)  # the file's own module-level names

    @property
    def attributes(self) -> set[str]:
        """The ``self.x`` the moved code reads that a callback does not have."""
        return {a for t in self.transformers for a in t.unresolved}

    @property
    def uses_log(self) -> bool:
        return any(t.uses_log for t in self.transformers)


def suggest(source: str, finding: Finding, module: str | None = None) -> str | None:
    """The callback class (and the line registering it) for one finding of a rule that declares a
    ``suggestion``, or None.

    ``module`` is the dotted name of the override's file, used to import the module-level names the
    moved code reads. The result never reads a name it does not define (pyflakes-clean): a value
    that cannot be carried over is bound to ``None`` on a line that says, as a TODO, what to do.
    """
    rule = RULES.get(finding.code)
    if rule is None or rule.suggestion is None:
        return None
    translated = _translated(source, finding)
    if translated is None:
        return None
    move, bodies = translated
    bodies = [(event, _with_recomputed_locals(move, event, body)) for event, body in bodies]
    imports = _imports_needed(source, "\n".join(body for _, body in bodies))
    placed = _placements(move, bodies, imports, module)
    return _callback_text(move, bodies, placed, imports)


def _translated(source: str, finding: Finding) -> tuple[_Move, list[tuple[str, str]]] | None:
    """The move and, per event, the override's code rewritten for it (gated as the override was), or
    None when the code cannot move (no plan, or it does not parse)."""
    try:
        plan = _plan(source, finding)
        if plan is None:
            return None
        moves, carried, parameters, func = plan
        transformers = [_FromTrainer(carried, parameters, event) for event, _ in moves]
        gates = _gates(finding)
        bodies = [
            (event, cst.parse_module(code + "\n").visit(t).code.rstrip())
            for (event, code), t in zip(moves, transformers)
        ]
        bodies = [(event, _gated(body, gates[event]) if event in gates else body) for event, body in bodies]
    except (SyntaxError, cst.ParserSyntaxError, ValueError):
        return None
    owner = finding.class_name or "Trainer"
    move = _Move(
        source,
        finding,
        func,
        carried,
        parameters,
        transformers,
        owner=owner,
        defined_at_top=_module_level_names(source),
        module_imports=_bound_by(_imports_needed(source, source)),
        settable=attribute_defaults(ast.parse(source), owner),
    )
    return move, bodies


def _placements(
    move: _Move, bodies: list[tuple[str, str]], imports: list[str], module: str | None
) -> list[list[str]]:
    """Per event body, the stand-in lines for the names it reads that nothing defines there; the
    file's own module-level names it reads are imported instead (added to ``imports``)."""
    borrowed: set[str] = set()  # module-level names of the override's file the moved code reads
    placed: list[list[str]] = []
    for event, body in bodies:
        available = _EVENT_SIGNATURE_NAMES | ({"logs"} if event == "on_log" else set()) | _bound_by(imports)
        missing = _undefined_names(body, available)
        borrowed |= missing & move.defined_at_top
        method = move.finding.method or "the override"
        placed.append(
            [
                _stand_in(value, move.owner, method, value in move.parameters)
                for value in sorted(missing - move.defined_at_top)
            ]
        )
    if borrowed:
        where = module or "the module that defines the Trainer"
        imports.append(
            f"from {module or 'your_module'} import {', '.join(sorted(borrowed))}"
            f"  # TODO: defined next to the Trainer in {where}; check this import path"
        )
    return placed


def _callback_text(
    move: _Move, bodies: list[tuple[str, str]], placed: list[list[str]], imports: list[str]
) -> str:
    """The suggestion: imports, the callback class with one method per event, and how to register it."""
    finding, owner = move.finding, move.owner
    name = f"{owner}{''.join(p.title() for p in (finding.method or 'hook').strip('_').split('_'))}Callback"
    event_names = " and ".join(f"`{event}`" for event, _ in bodies)
    attributes = move.attributes
    given = {a: move.settable[a] for a in sorted(attributes) if a in move.settable}  # __init__ arguments
    unresolved = sorted(f"self.{a}" for a in attributes if a not in given)
    uses_log = move.uses_log
    lines = [
        *imports,
        "from transformers import TrainerCallback",
        "",
        "",
        f"class {name}(TrainerCallback):",
        f'    """Moved out of `{owner}.{finding.method}` ({finding.code}): runs on {event_names}."""',
    ]
    lines += _differences(finding.method, [event for event, _ in bodies], uses_log)
    lines += _init_lines(owner, given, uses_log)
    for (event, body), stand_ins in zip(bodies, placed):
        extra = "logs=None, " if event == "on_log" else ""
        lines += ["", f"    def {event}(self, args, state, control, {extra}**kwargs):"]
        if unresolved:
            lines.append(
                f"        # TODO: {', '.join(unresolved)} belonged to the Trainer: pass what you need to __init__."
            )
        lines += [f"        {line}" for line in stand_ins]
        lines += textwrap.indent(body, " " * 8).splitlines()
    if uses_log:
        lines += _ON_LOG
    lines += ["", "", _register_line(name, given)]
    return "\n".join(lines) + "\n"


_ON_LOG = [
    "",
    "    def on_log(self, args, state, control, logs=None, **kwargs):",
    "        if logs is not None and self.pending_logs:",
    "            logs.update(self.pending_logs)  # seen by the callbacks and reporters after this one",
    "            state.log_history[-1].update(self.pending_logs)  # its copy was taken before on_log",
    "            self.pending_logs.clear()",
]


def _register_line(name: str, given: dict[str, str | None]) -> str:
    """How to register the callback. A value the Trainer subclass sets without a known literal
    (``self.tok = tokenizer``) is passed from the trainer itself (``tok=trainer.tok``): passing
    ``None`` gave a callback that raised ``AttributeError`` at its first step (issue 32)."""
    from_trainer = [a for a, v in given.items() if v in (None, "None")]
    arguments = ", ".join(f"{a}=trainer.{a}" if a in from_trainer else f"{a}={v}" for a, v in given.items())
    line = f"# register it: trainer.add_callback({name}({arguments}))"
    if from_trainer:
        return line + "  # after the Trainer is built: the values come from it"
    return line + f"  # or Trainer(..., callbacks=[{name}({arguments})])"


# Per-micro-batch methods: code moved out of them to step events runs once per optimiser step.
_MICRO_BATCH = frozenset({"training_step", "compute_loss"})


def _differences(method: str | None, events: Sequence[str], logs: bool = False) -> list[str]:
    """Comment lines naming how the callback's timing differs from the override's (issue 32: the gated
    timer fired one step later and measured the whole optimiser step, and nothing said so; a step-gated
    file write moved to ``on_save`` wrote nothing between checkpoints, and nothing said so)."""
    if method not in _MICRO_BATCH:
        return []
    if "on_step_end" not in events:
        if events != ["on_save"]:
            return []
        return [
            f"    # Differs from `{method}`: it runs only when a checkpoint is saved, not on every step the",
            "    # override's gate selects; to keep those steps, move it to `on_step_end` instead.",
        ]
    logged = (
        ["    # its value goes into the Trainer's next log line, not a log entry of its own;"] if logs else []
    )
    if "on_step_begin" not in events:
        return [
            f"    # Differs from `{method}`: it runs once per optimiser step, not per micro-batch, and",
            "    # `state.global_step` is already one higher in `on_step_end`.",
            *[line.replace(";", ".") for line in logged],
        ]
    return [
        f"    # Differs from `{method}`: a timer from `on_step_begin` to `on_step_end` measures the whole",
        "    # optimiser step (every accumulated micro-batch and the optimiser), not one forward/backward;",
        *logged,
        "    # it runs once per optimiser step, not per micro-batch, and `state.global_step` is already",
        "    # one higher in `on_step_end`.",
    ]


def _init_lines(owner: str, given: dict[str, str | None], uses_log: bool) -> list[str]:
    """``__init__``: the Trainer's own settings the moved code reads, as arguments (with the Trainer's
    default when its class shows one), and the log values kept for ``on_log``."""
    if not given and not uses_log:
        return []
    params = "".join(f", {a}={v if v is not None else 'None'}" for a, v in given.items())
    lines = ["", f"    def __init__(self{params}):"]
    for attribute, value in given.items():
        todo = "" if value is not None else f"  # TODO: pass the value of `{owner}.{attribute}`"
        lines.append(f"        self.{attribute} = {attribute}  # was `{owner}.{attribute}`{todo}")
    if uses_log:
        lines.append(f"        self.{PENDING_LOGS} = {{}}  # merged into the next log line")
    return lines


def _with_recomputed_locals(move: _Move, event: str, body: str) -> str:
    """``body`` preceded by the override's assignments of the locals it reads but does not compute,
    when the event can compute them too (``suggest_inputs.recomputed``)."""
    available = _EVENT_SIGNATURE_NAMES | ({"logs"} if event == "on_log" else set()) | move.module_imports
    missing = _undefined_names(body, available) - move.defined_at_top - move.parameters

    translators: dict[str, _FromTrainer] = {}

    def translate(code: str) -> tuple[str, set[str]] | None:
        t = _FromTrainer(move.carried, move.parameters, event)
        try:
            text = cst.parse_module(code + "\n").visit(t).code.rstrip()
        except (cst.ParserSyntaxError, ValueError):
            return None
        if t.unresolved - set(move.settable):
            return None
        translators[text] = t
        return text, _undefined_names(text, available) - move.defined_at_top

    statements, _left = recomputed(missing, local_assignments(move.func), move.source, translate)
    move.transformers += [
        translators[text] for text in statements
    ]  # their attributes: __init__ arguments too
    return "\n".join([*statements, body]) if statements else body


_EVENT_SIGNATURE_NAMES = frozenset({"self", "args", "state", "control", "kwargs"})


def _module_level_names(source: str) -> set[str]:
    """Names the override's file binds at top level other than by import (constants, helpers)."""
    names: set[str] = set()
    for statement in ast.parse(source).body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _bound_by(imports: Sequence[str]) -> set[str]:
    names: set[str] = set()
    for statement in ast.parse("\n".join(imports)).body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in statement.names}
    return names


def _undefined_names(body: str, available: set[str] | frozenset[str]) -> set[str]:
    """Names the moved code reads that neither it, the event's signature nor the imports bind."""
    tree = ast.parse(body)
    bound = set(available) | set(dir(builtins))
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return read - bound


def _stand_in(name: str, owner: str, method: str, is_parameter: bool) -> str:
    """A binding for a value the event does not have, with the TODO that says what to do about it."""
    if is_parameter:
        why = f"`{name}` was an argument of `{owner}.{method}`; callback events do not receive it"
    else:
        why = f"`{name}` was computed in `{owner}.{method}` outside the moved code; compute it here"
    return f"{name} = None  # TODO: {why}"


def _imports_needed(source: str, code: str) -> list[str]:
    """The module's top-level import statements that bind a name the moved code reads."""
    try:
        read = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
        read |= {
            n.value.id
            for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
    except SyntaxError:
        return []
    needed = []
    for statement in ast.parse(source).body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound = {(a.asname or a.name).split(".")[0] for a in statement.names}
            if bound & read and "TrainerCallback" not in bound:
                needed.append(ast.get_source_segment(source, statement) or "")
    return [line for line in needed if line]


def module_name(shown: str) -> str | None:
    """``src/pkg/train.py`` -> ``pkg.train``: where a suggestion imports the file's own helpers from."""
    parts = PurePosixPath(shown.replace("\\", "/")).with_suffix("").parts
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    dotted = ".".join(parts)
    return dotted if parts and all(p.isidentifier() for p in parts) else None


def suggestions(source: str, findings: Sequence[Finding]) -> list[tuple[Finding, str]]:
    """One suggestion per distinct callback: two findings in one moved statement give one class."""
    out: list[tuple[Finding, str]] = []
    seen: set[str] = set()
    for f in findings:
        text = suggest(source, f)
        if text is not None and text not in seen:
            seen.add(text)
            out.append((f, text))
    return out
