"""TW402: a callback event method without ``**kwargs``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from trainwright_lint.analysis.facts import METHODS
from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import CALLBACK
from trainwright_lint.rules._events import is_event_name
from trainwright_lint.rules.base import (
    CALLBACK_EVENTS,
    SAFE,
    Candidate,
    ClassContext,
    Example,
    Rule,
    describe_release_runs,
)
from trainwright_lint.syntax import FunctionNode


@dataclass(frozen=True)
class AddVarKeyword(Edit):
    """TW402: give an event method ``**kwargs``."""

    method: str
    line: int
    unsafe: bool = False

    def describe(self) -> str:
        return f"Add `**kwargs` to `{self.method}`"


class EventWithoutKwargs(Rule):
    """A callback event method does not accept `**kwargs`.

    `CallbackHandler.call_event` always calls `callback.on_x(args, state, control, **kwargs)` with
    `model`, `processing_class`, `optimizer`, `lr_scheduler`, `train_dataloader` and
    `eval_dataloader` (plus `logs` or `metrics` for some events), so a method without `**kwargs`
    fails with `TypeError: ... got an unexpected keyword argument 'model'` the first time it fires.
    """

    FIX = 'Add `**kwargs` to the event method and read what you need from it (`kwargs["model"]`).'
    EVIDENCE = ("https://github.com/huggingface/transformers/issues/9603",)

    code = "TW402"
    release_facts = CALLBACK_EVENTS
    FACTS = (METHODS,)
    name = "event-without-kwargs"
    message = (
        "`{method}` cannot take the keyword arguments the Trainer passes; it has no `**kwargs`, and the "
        "Trainer passes {kwargs}; add `**kwargs`"
    )
    roles = frozenset({CALLBACK})
    fix_applicability = SAFE
    fix_module = "trainwright_lint.rules.tw402_event_without_kwargs_fix"
    fix_safety_note = (
        "What the behaviour oracle (`trainwright.testing.oracle`, issue 32) checked: the original raises "
        "`TypeError` the first time its event fires, on every release, so there is no run of it to keep. "
        "The fixed program is judged against the original whose event methods are handed only the "
        "arguments they declare (`trainwright.testing.declared`), on the same release: per-step loss and "
        "gradient norm, `log_history`, events, printed lines and files must be equal. The rule's example "
        "and the gallery's `broken_callback_before.py` are, on every release `scripts/oracle_matrix.py` "
        "runs (docs/lint.md). A method that reads `locals()` or is called by your own code with other "
        "keywords is outside what the fix keeps."
    )
    fix_pass = 2
    fix_title = "add `**kwargs`"

    INVALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None):
                    print(logs)
            """,
            line=4,
            fixed="""
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    print(logs)
            """,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import TrainerCallback

            class MyCallback(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    print(logs)
            """
        ),
    )

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        # What an event receives is read over the whole target range (``_passed_on_range``) and
        # whether a name is an event over every catalogued release: judged once, it holds everywhere.
        for _method, fn in ctx.methods():
            if fn.name.startswith("on_") and fn.args.kwarg is None:
                yield Candidate(lambda c, fn=fn: self._judge(c, fn))  # type: ignore[misc]

    def _judge(self, ctx: ClassContext, fn: FunctionNode) -> Finding | None:
        if not is_event_name(ctx, fn.name):
            return None
        accepted = {a.arg for a in (*fn.args.args, *fn.args.kwonlyargs)}
        passed = {k: r for k, r in _passed_on_range(ctx, fn.name).items() if k not in accepted}
        if not passed:
            return None
        message = self.message.format(method=fn.name, kwargs=_shown(ctx, passed))
        return self.report(ctx, fn, message, method=fn.name, fix=plan_var_keyword(fn))


def _passed_on_range(ctx: ClassContext, event_name: str) -> dict[str, tuple[str, ...]]:
    """Each keyword argument the event receives on some release of the target range -> those releases,
    oldest release's order first (``tokenizer`` on 4.x, ``processing_class`` from 4.46): the message is
    the same at every release, so the finding merged over the range names what each release passes."""
    passed: dict[str, tuple[str, ...]] = {}
    releases = ctx.releases or ((ctx.view.version,) if ctx.view is not None else ())
    for release in releases:
        event = ctx.catalog.at(release).events.get(event_name) if ctx.catalog is not None else None
        for k in event.kwargs if event else ():
            passed[k] = (*passed.get(k, ()), release)
    if not passed and ctx.catalog is not None:
        history = ctx.catalog.event_history(event_name)
        passed = {k: releases for k in (history.kwargs if history is not None else ())}
    return passed or {"model": releases}


def _shown(ctx: ClassContext, passed: dict[str, tuple[str, ...]]) -> str:
    """The first four names, and every name that only part of the range passes, with where."""
    range_ = ctx.releases or tuple(sorted({r for rs in passed.values() for r in rs}))
    out = []
    for i, (name, releases) in enumerate(passed.items()):
        partial = len(releases) < len(range_)
        if i < 4 or partial:
            where = f" (on {describe_release_runs(releases, range_)})" if partial else ""
            out.append(f"`{name}=`{where}")
    return ", ".join(out) + (", ..." if len(passed) > len(out) else "")


# -- planning the fix (pure ``ast``; the libcst transform is in ``tw402_event_without_kwargs_fix``)


def plan_var_keyword(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> AddVarKeyword | None:
    return None if fn.args.kwarg is not None else AddVarKeyword(method=fn.name, line=fn.lineno)
