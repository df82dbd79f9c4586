"""TW201/TW202 fix (unsafe): move the observing statements of an override into a ``TrainerCallback``.

What the edit holds and why it is unsafe: ``rules/_move.py``. This module writes it with libcst: it
removes the moved statements (and the override when only ``return super().m(...)`` is left), writes the
callback class right before the trainer class, registers it at the end of ``__init__`` (adding one that
calls ``super().__init__(*args, **kwargs)`` when the class has none), and imports ``TrainerCallback``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import libcst as cst

from trainwright_lint.rules._cst import LineTransformer
from trainwright_lint.rules._move import SPAN_END, SPAN_FALLBACK, MoveToCallback

#: A statement of a block, as libcst types a ``Module``'s or an ``IndentedBlock``'s body.
Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement


class _Rename(cst.CSTTransformer):
    """``self`` -> ``trainer``; a local crossing from the first event to the second -> ``self.<name>``."""

    def __init__(self, kept: set[str]) -> None:
        super().__init__()
        self.kept = kept

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if updated.value == "self":
            return updated.with_changes(value="trainer")
        if updated.value in self.kept:
            return cst.Attribute(value=cst.Name("self"), attr=cst.Name(updated.value))
        return updated


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.stored: set[str] = set()
        self.loaded: set[str] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self.stored.add(node.target.value)

    def visit_Name(self, node: cst.Name) -> None:
        self.loaded.add(node.value)


def _code(statements: list[Statement]) -> str:
    return textwrap.dedent("".join(cst.Module(body=[s]).code for s in statements))


def _names(text: str) -> _Names:
    names = _Names()
    cst.parse_module(text).visit(names)
    return names


def _event_method(
    event: str,
    text: str,
    bindings: Sequence[tuple[str, str]],
    kept: set[str],
    *,
    since: str = "",
    guard: str = "",
) -> str:
    """One handler running ``text``, with the parameters it reads bound first (``bindings``: (local,
    expression), ``MoveToCallback.bindings``). ``since``: the release ``event`` fires from, when the range
    starts before it (a ``noqa`` for TW401 says so); ``guard``: a condition the body runs under."""
    body = cst.parse_module(text).visit(_Rename(kept)).code if text.strip() else "pass\n"
    read = _names(body).loaded  # bind only what this event's code reads: no unused locals (F841)
    bound = [("trainer", "self.trainer"), *bindings]
    lines = [*(f"{name} = {value}\n" for name, value in bound if name in read), body]
    code = "".join(lines)
    if guard:
        code = f"if {guard}:\n" + textwrap.indent(code, "    ")
    note = f"  # noqa: TW401 - fires from transformers {since}" if since else ""
    return f"def {event}(self, args, state, control, **kwargs):{note}\n" + textwrap.indent(code, "    ")


def _span_methods(edit: MoveToCallback, first: str, second: str) -> list[str]:
    """A timer's handlers (``edit.span``), and, for releases of the range without ``SPAN_END``, the
    second half at ``SPAN_FALLBACK`` where ``SPAN_END`` does not exist."""
    kept = _names(first).stored & _names(second).loaded
    halves = {"before": first, "after": second}
    since = edit.fallback_since
    methods = [
        _event_method(
            event,
            "".join(halves[h] for h in sides.split(",")),
            edit.bindings(),
            kept,
            since=since if event == SPAN_END else "",
        )
        for event, sides in edit.span
    ]
    if since:
        guard = f'not hasattr(TrainerCallback, "{SPAN_END}")'
        methods.append(_event_method(SPAN_FALLBACK, second, edit.bindings(), kept, guard=guard))
    return methods


def _held(guard: str, code: str) -> str:
    """``code`` under the override's condition that held it (``MoveToCallback.guard``); renamed with
    the rest (``self`` -> ``trainer``)."""
    if not guard or not code.strip():
        return code
    return f"if {guard}:\n" + textwrap.indent(code, "    ")


def callback_source(edit: MoveToCallback, before: list[Statement], after: list[Statement]) -> str:
    """The callback class for ``edit``, given the moved statements on each side of the ``super()`` call."""
    first, second = (_held(edit.guard, _code(side)) for side in (before, after))
    methods: list[str]
    if edit.span:
        methods = _span_methods(edit, first, second)
    elif edit.before_event == edit.after_event or not first.strip() or not second.strip():
        event = edit.after_event if not first.strip() else edit.before_event
        methods = [_event_method(e, first + second, edit.bindings(), set()) for e in (event, *edit.also)]
    else:
        kept = _names(first).stored & _names(second).loaded
        methods = [
            _event_method(edit.before_event, first, edit.bindings(), kept),
            _event_method(edit.after_event, second, edit.bindings(), kept),
        ]
    title = f"Code of `{edit.class_name}.{edit.method}`, moved here by `trainwright fix --unsafe-fixes`."
    doc = f'"{title}"\n'
    if edit.differs:  # the named difference, where the user reads the callback
        said = textwrap.fill(f"It {edit.differs}.", width=100)
        doc = f'"""{title}\n\n{said}\n"""\n'
    init = "def __init__(self, trainer):\n    self.trainer = trainer\n"
    members = "\n".join([doc, init, *methods])
    return f"class {edit.callback}(TrainerCallback):\n" + textwrap.indent(members, "    ")


class Fixer(LineTransformer):
    def __init__(self, edits: Sequence[MoveToCallback]) -> None:
        super().__init__()
        self.by_method = {(e.line + e.def_offset, e.method): e for e in edits}
        self.by_class = {e.line: [x for x in edits if x.line == e.line] for e in edits}
        self.callbacks: dict[int, list[str]] = {}  # class line -> callback sources
        self.classes: list[int] = []
        self.current: MoveToCallback | None = None
        self.before: list[Statement] = []
        self.after: list[Statement] = []

    # -- the override ------------------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(self.line_of(node.name))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        edit = self.by_method.get((self.def_line(node), node.name.value))
        if edit is not None:
            self.current, self.before, self.after = edit, [], []

    def _moved(self, node: cst.CSTNode) -> bool:
        edit = self.current
        return edit is not None and any(edit.line + a == self.line_of(node) for a, _ in edit.spans)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> Statement | cst.RemovalSentinel:
        return self._take(original_node, updated_node)

    def _take(self, original_node: Statement, updated_node: Statement) -> Statement | cst.RemovalSentinel:
        if not self._moved(original_node):
            return updated_node
        assert self.current is not None
        split = self.current.line + self.current.split_offset
        (self.before if self.line_of(original_node) < split else self.after).append(updated_node)
        return cst.RemoveFromParent()

    leave_If = leave_For = leave_With = leave_While = leave_Try = _take

    def leave_IndentedBlock(
        self, original: cst.IndentedBlock, updated: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        edit = self.by_method.get((self.def_line(original), original.name.value))
        if edit is not None and edit is self.current:
            self.callbacks.setdefault(edit.line, []).append(callback_source(edit, self.before, self.after))
            self.current = None
            if edit.drop_override:
                return cst.RemoveFromParent()
            return updated
        if original.name.value == "__init__" and self.classes and self.classes[-1] in self.by_class:
            return _register(updated, self.by_class[self.classes[-1]])
        return updated

    # -- the class and the module ------------------------------------------------------------------

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        line = self.classes.pop()
        edits = self.by_class.get(line)
        if not edits or edits[0].has_init:
            return updated
        init = cst.parse_statement(
            "def __init__(self, *args, **kwargs):\n    super().__init__(*args, **kwargs)\n"
        )
        assert isinstance(init, cst.FunctionDef)
        init = _register(init, edits)
        body = [b for b in updated.body.body if not _is_pass(b)]
        at = 1 if body and _is_docstring(body[0]) else 0
        body.insert(at, init.with_changes(leading_lines=[] if at == 0 else [cst.EmptyLine(indent=False)]))
        # PEP 8's blank line between the written ``__init__`` and the method after it
        after = body[at + 1] if at + 1 < len(body) else None
        if isinstance(after, (cst.FunctionDef, cst.ClassDef)) and not after.leading_lines:
            body[at + 1] = after.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return updated.with_changes(body=updated.body.with_changes(body=body))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = list(updated.body)
        out: list[Statement] = []
        needs_import = any(e.needs_import for edits in self.by_class.values() for e in edits)
        for stmt, old in zip(body, original.body, strict=False):
            if isinstance(old, cst.ClassDef) and self.line_of(old.name) in self.callbacks:
                for k, source in enumerate(self.callbacks[self.line_of(old.name)]):
                    new = cst.parse_statement(source)
                    gap = list(stmt.leading_lines) if k == 0 else [cst.EmptyLine(), cst.EmptyLine()]
                    out.append(new.with_changes(leading_lines=gap))
                stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            out.append(stmt)
        if needs_import and self.callbacks:  # the fixer sees the class statement: the import goes beside it
            first = out[0]
            out[0] = first.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            out.insert(
                0,
                cst.parse_statement("from transformers import TrainerCallback\n").with_changes(
                    leading_lines=first.leading_lines
                ),
            )
        return updated.with_changes(body=out)


def _register(init: cst.FunctionDef, edits: Sequence[MoveToCallback]) -> cst.FunctionDef:
    names = list(dict.fromkeys(e.callback for e in edits))
    calls = [cst.parse_statement(f"self.add_callback({name}(self))\n") for name in names]
    body = list(init.body.body) if isinstance(init.body, cst.IndentedBlock) else []
    return init.with_changes(body=init.body.with_changes(body=[*body, *calls]))


def _is_pass(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in stmt.body)


def _is_docstring(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
