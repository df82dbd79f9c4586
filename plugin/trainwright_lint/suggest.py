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
import re
import textwrap
from collections.abc import Sequence

import libcst as cst

from trainwright_lint.finding import Finding

SUGGESTED_CODES = ("TW201", "TW202", "TW203")
_EVENT = re.compile(r"\bon_[a-z_]+\b")
_EVENT_ARGUMENTS = {"state": "state", "args": "args", "control": "control"}
_EVENT_KWARGS = frozenset(
    {"model", "optimizer", "lr_scheduler", "processing_class", "train_dataloader", "eval_dataloader"}
)
PENDING_LOGS = "pending_logs"


class _FromTrainer(cst.CSTTransformer):
    """Rewrite override code for a callback event.

    ``self.state`` -> ``state``, ``self.model`` -> ``kwargs["model"]``, ``self.log(x)`` ->
    ``self.pending_logs.update(x)``, a carried local ``start`` -> ``self.start``; records the other
    ``self.x`` and the override's parameters it reads, which the event does not have.
    """

    def __init__(
        self, carried: frozenset[str], parameters: frozenset[str], event_arguments: frozenset[str] = frozenset()
    ) -> None:
        super().__init__()
        self.carried = carried
        self.parameters = parameters
        self.event_arguments = event_arguments
        self.unresolved: set[str] = set()
        self.missing_parameters: set[str] = set()
        self.uses_log = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
            and func.attr.value == "log"
        ):
            self.uses_log = True
            return updated.with_changes(func=cst.parse_expression(f"self.{PENDING_LOGS}.update"))
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        # `x.model`: the attribute name is not a variable; undo what leave_Name did to it.
        updated = updated.with_changes(attr=original.attr)
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
            self.missing_parameters.add(name)
        return updated


def _events(finding: Finding) -> list[str]:
    found = list(dict.fromkeys(_EVENT.findall(finding.message)))
    return found or ["on_step_end"]


def _find_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == line:
            return node
    return None


def _enclosing_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best = None
    for node in ast.walk(tree):
        inside = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            node.lineno <= line <= (node.end_lineno or node.lineno)
        )
        if inside and (best is None or node.lineno > best.lineno):  # the innermost one
            best = node
    return best


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


def _read_names(statements: Sequence[ast.stmt]) -> set[str]:
    return {
        node.id
        for statement in statements
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _plan(source: str, finding: Finding) -> tuple[list[tuple[str, str]], frozenset[str], frozenset[str]] | None:
    """(event, code) pairs to move, the locals carried between events, and the override's parameters."""
    tree = ast.parse(source)
    lines = source.splitlines()
    events = _events(finding)
    if finding.code == "TW202":
        func = _find_function(tree, finding.line)
        if func is None:
            return None
        body = [s for s in func.body if not _is_docstring(s)]
        split = next((i for i, s in enumerate(body) if _calls_super(source, s)), None)
        if split is None:
            return None
        before = body[:split]
        after = [s for s in body[split + 1 :] if not isinstance(s, ast.Return)]
        carried = frozenset(_assigned_names(before) & _read_names(after))
        begin, end = events[0], events[-1]
        if begin == end:  # one event: everything runs there, in the original order
            moves = [(begin, _source(lines, before + after))] if before or after else []
        else:
            moves = [(event, _source(lines, part)) for event, part in ((begin, before), (end, after)) if part]
        return (moves or None), carried, _parameters(func)  # type: ignore[return-value]
    func = _enclosing_function(tree, finding.line)
    if func is None:
        return None
    # The whole top-level statement of the override that holds the flagged line: its condition is
    # part of the logic being moved (`if step % n == 0: control.should_save = True`).
    holder = next(
        (s for s in func.body if s.lineno <= finding.line <= (s.end_lineno or s.lineno)), None
    )
    if holder is None:
        return None
    event = "on_log" if finding.method == "log" else events[0]  # a log override reads the log line
    return [(event, _source(lines, [holder]))], frozenset(), _parameters(func)


def suggest(source: str, finding: Finding) -> str | None:
    """The callback class (and the line registering it) for one TW2xx finding, or None."""
    if finding.code not in SUGGESTED_CODES:
        return None
    try:
        plan = _plan(source, finding)
        if plan is None or plan[0] is None:
            return None
        moves, carried, parameters = plan
        event_arguments = frozenset({"logs"}) if any(event == "on_log" for event, _ in moves) else frozenset()
        transformer = _FromTrainer(carried, parameters, event_arguments)
        bodies = [(event, cst.parse_module(code + "\n").visit(transformer).code.rstrip()) for event, code in moves]
    except (SyntaxError, cst.ParserSyntaxError, ValueError):
        return None
    owner = finding.class_name or "Trainer"
    name = f"{owner}{''.join(p.title() for p in (finding.method or 'hook').strip('_').split('_'))}Callback"
    event_names = " and ".join(f"`{event}`" for event, _ in bodies)
    lines = [
        *_imports_needed(source, "\n".join(body for _, body in bodies)),
        "from transformers import TrainerCallback",
        "",
        "",
        f"class {name}(TrainerCallback):",
        f'    """Moved out of `{owner}.{finding.method}` ({finding.code}): runs on {event_names}."""',
    ]
    todo = sorted(f"self.{a}" for a in transformer.unresolved) + sorted(transformer.missing_parameters)
    if transformer.uses_log:
        lines += ["", "    def __init__(self):", f"        self.{PENDING_LOGS} = {{}}  # merged into the next log line"]
    for event, body in bodies:
        extra = "logs=None, " if event == "on_log" else ""
        lines += ["", f"    def {event}(self, args, state, control, {extra}**kwargs):"]
        if todo:
            lines.append(f"        # TODO: {', '.join(todo)} belonged to the override: pass what you need to __init__.")
        lines += textwrap.indent(body, " " * 8).splitlines()
    if transformer.uses_log:
        lines += [
            "",
            "    def on_log(self, args, state, control, logs=None, **kwargs):",
            "        if logs is not None and self.pending_logs:",
            "            logs.update(self.pending_logs)  # seen by the callbacks and reporters after this one",
            "            state.log_history[-1].update(self.pending_logs)  # its copy was taken before on_log",
            "            self.pending_logs.clear()",
        ]
    lines += [
        "",
        "",
        f"# register it: trainer.add_callback({name}())  # or Trainer(..., callbacks=[{name}()])",
    ]
    return "\n".join(lines) + "\n"


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
