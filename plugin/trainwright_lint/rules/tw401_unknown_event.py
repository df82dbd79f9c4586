"""TW401: a callback method named like an event that the target release never fires."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from trainwright_lint.analysis.facts import CLASS, METHODS, SharedFact
from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import CALLBACK
from trainwright_lint.project.summary import MethodSummary
from trainwright_lint.rules._events import NEAR_MISSES, closest_event
from trainwright_lint.rules.base import (
    CALLBACK_EVENTS,
    EVENTS,
    UNSAFE,
    Candidate,
    ClassContext,
    Example,
    Rule,
)
from trainwright_lint.syntax import FunctionNode

# The class's own ``on_*`` methods that nothing of the project calls or defines: the event handlers.
HANDLERS: SharedFact[list[tuple[MethodSummary, FunctionNode]]] = SharedFact("event handlers", CLASS)


@dataclass(frozen=True)
class RenameMethod(Edit):
    """TW401 (unsafe: it changes when the code runs): rename a method defined on ``line``."""

    method: str
    line: int
    new: str
    unsafe: bool = True

    def describe(self) -> str:
        return f"Rename `{self.method}` to `{self.new}`"


class UnknownEvent(Rule):
    """A `TrainerCallback` subclass defines an `on_*` method that is not an event of the target
    transformers release, so it is never called: `on_batch_end`, `on_evaluate_begin`,
    `on_save_begin` never existed; `on_pre_optimizer_step` needs 4.45+, `on_push_begin` 5.0+.

    The message suggests the closest real event. Methods your own code calls (`self.on_custom()`) or
    that a project base callback defines are not reported.
    """

    FIX = (
        "Rename the method to the real event the message suggests (check when that event fires), or call "
        "it yourself if it is a helper."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    code = "TW401"
    release_facts = CALLBACK_EVENTS
    FACTS = (
        METHODS,
        HANDLERS,
    )
    name = "unknown-event"
    message = "`{method}` is never called: it {why}{suggestion}"
    roles = frozenset({CALLBACK})
    fix_applicability = UNSAFE
    fix_module = "trainwright_lint.rules.tw401_unknown_event_fix"
    fix_pass = 1
    fix_title = "rename a misspelt callback event"

    INVALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_batch_end(self, args, state, control, **kwargs):
                    print(state.global_step)
            """,
            line=4,
            fixed="""
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_step_end(self, args, state, control, **kwargs):
                    print(state.global_step)
            """,
        ),
        Example(
            """
            from transformers import TrainerCallback

            class GradCallback(TrainerCallback):
                def on_pre_optimizer_step(self, args, state, control, **kwargs):
                    pass
            """,
            version="4.44.2",
            line=4,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_step_end(self, args, state, control, **kwargs):
                    self.on_custom_hook(state)

                def on_custom_hook(self, state):  # our own helper, called above
                    pass
            """
        ),
    )

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        if ctx.view is None or ctx.catalog is None:
            return
        for method, fn in _maybe_events(ctx):
            yield Candidate(lambda c, method=method, fn=fn: self._judge(c, method, fn), (EVENTS,))  # type: ignore[misc]

    def _judge(self, ctx: ClassContext, method: MethodSummary, fn: FunctionNode) -> Finding | None:
        assert ctx.view is not None and ctx.catalog is not None
        events = ctx.view.events
        if method.name in events:
            return None
        # A rename must not clash with another misspelt method's rename at this release.
        unknown = [m.name for m, _ in _maybe_events(ctx) if m.name not in events]
        renames = {m: unambiguous_event(m, list(events), NEAR_MISSES) for m in unknown}
        name = method.name
        history = ctx.catalog.event_history(name)
        if history is not None:
            why = f"is not an event in transformers {ctx.target} (fires from {history.since}" + (
                f" to {history.until})" if history.until else ")"
            )
            suggestion = (
                f"; upgrade transformers or move the code to `{closest_event(ctx, name) or 'on_step_end'}`"
            )
        else:
            why = f"is not a TrainerCallback event in transformers {ctx.target}"
            close = closest_event(ctx, name)
            suggestion = f"; did you mean `{close}`?" if close else f"; events are: {', '.join(events)}"
        fix, note = _rename_fix(fn, renames, ctx.own_method_names())
        finding = self.report(
            ctx,
            fn,
            self.message.format(method=name, why=why, suggestion=suggestion),
            method=name,
            fix=fix,
        )
        return replace(finding, fix_note=note) if note else finding

    def fix_is_valid(self, ctx: ClassContext, edit: Edit) -> bool:  # type: ignore[override]  # a class rule
        """The new name must be an event of this release and not defined by the class already."""
        return (
            isinstance(edit, RenameMethod)
            and ctx.view is not None
            and edit.new in ctx.view.events
            and edit.new not in ctx.own_method_names()
        )


def _maybe_events(ctx: ClassContext) -> list[tuple[MethodSummary, FunctionNode]]:
    """The class's ``on_*`` methods that neither the project's own classes define nor its code
    calls: each is an event handler, known at a release or not (release-independent, shared)."""

    def compute() -> list[tuple[MethodSummary, FunctionNode]]:
        project = ctx.project_methods()
        return [
            (method, fn)
            for method, fn in ctx.methods()
            if method.name.startswith("on_")
            and method.name not in project
            and not _called_by_project(ctx, method.name)
        ]

    return ctx.fact(HANDLERS, None, compute)


def _called_by_project(ctx: ClassContext, name: str) -> bool:
    """``self.on_custom(...)`` in the class's file: a helper the callback calls itself. The literal
    test first: most handlers are never called by name, and each pattern costs a compile."""
    source = ctx.unit.source
    return f".{name}" in source and re.search(rf"\.{re.escape(name)}\s*\(", source) is not None


def _rename_fix(
    fn: FunctionNode, renames: dict[str, str | None], own: set[str]
) -> tuple[RenameMethod | None, str]:
    """The rename, unless it is ambiguous, would shadow a method the class has, or another misspelt
    method of the class would get the same name (one handler would silently replace the other)."""
    new = renames.get(fn.name)
    if new is None:
        return None, ""
    if new in own:
        return None, f"no fix: the class already defines `{new}`; merge the two methods by hand"
    clash = sorted(other for other, target in renames.items() if target == new and other != fn.name)
    if clash:
        names = ", ".join(f"`{c}`" for c in clash)
        return None, f"no fix: {names} would also become `{new}`, and one handler would replace the other"
    return RenameMethod(method=fn.name, line=fn.lineno, new=new), ""


# -- planning the fix (pure ``ast``; the libcst transform is in ``tw401_unknown_event_fix``)


def unambiguous_event(name: str, events: Sequence[str], near_misses: Mapping[str, str]) -> str | None:
    """The single real event ``name`` is a misspelling of, or None when there is no clear one.

    A hand-picked near miss counts when it is a plain event name. Otherwise the closest event must be
    similar (difflib ratio >= 0.85) and clearly closer than the runner-up (by >= 0.07):
    ``on_step_ned`` -> ``on_step_end`` (0.91 vs 0.80 for ``on_substep_end``), while ``on_step``
    (``on_step_end`` 0.78, ``on_step_begin`` 0.70) and ``on_save_end`` (``on_step_end`` 0.82,
    ``on_save`` 0.78) are left to a human."""
    picked = near_misses.get(name)
    if picked is not None:
        return picked if picked in events else None
    import difflib  # only for a misspelt event: not worth its import on every run

    scored = sorted(((difflib.SequenceMatcher(None, name, e).ratio(), e) for e in events), reverse=True)
    if not scored or scored[0][0] < 0.85:
        return None
    if len(scored) > 1 and scored[0][0] - scored[1][0] < 0.07:
        return None
    return scored[0][1]
