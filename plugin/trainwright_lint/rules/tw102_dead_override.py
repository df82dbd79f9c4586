"""TW102: overriding a Trainer method the target release never calls or no longer has."""

from __future__ import annotations

import re
from collections.abc import Iterator

from trainwright.catalog import MethodHistory
from trainwright.catalog.versions import version_key
from trainwright_lint.analysis.facts import METHOD, METHODS, SharedFact
from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import alternative
from trainwright_lint.rules.base import (
    Candidate,
    ClassContext,
    Example,
    Rule,
    library_class_fact,
    library_fact,
    trainer_fact,
)
from trainwright_lint.syntax import FunctionNode

DEAD_FALLBACK = {
    "create_optimizer_and_scheduler": "instead, override `create_optimizer` and/or `create_scheduler`",
    "prediction_loop": "instead, override `evaluation_loop` (or `prediction_step`)",
}


# Whether the project refers to a method itself: key, (class key, method name).
REFERENCED: SharedFact[bool] = SharedFact("referenced by the project", METHOD)


def _referenced(ctx: ClassContext, name: str) -> bool:
    """The project refers to ``name`` itself (``self.prediction_loop(...)``, ``fn = self.evaluation_loop
    if ... else self.prediction_loop``, ``trainer.create_optimizer_and_scheduler(...)`` in a script):
    then the project runs it, whatever the Trainer does. Counted in the classes of the hierarchy and in
    module code outside any class; ``super().name`` does not count."""
    pattern = re.compile(rf"\.{re.escape(name)}\b")
    family = set(ctx.workspace.hierarchy(ctx.key))

    def search() -> bool:
        for unit in {id(u): u for u in _units(ctx, family)}.values():
            spans = [
                (c.line, c.end_line, k)
                for q, c in unit.summary.classes.items()
                for k in (f"{unit.path}::{q}",)
            ]
            for m in pattern.finditer(unit.source):
                if m.start() and unit.source[m.start() - 1] == ")":
                    continue  # super().name / call().name
                line = unit.line_of(m.start())
                inside = [k for first, last, k in spans if first <= line <= last]
                if not inside or any(k in family for k in inside):
                    return True
        return False

    return ctx.unit.facts.get(REFERENCED, (ctx.key, name), search)


def _units(ctx: ClassContext, family: set[str]) -> list:  # type: ignore[type-arg]
    out = [ctx.unit]
    for key in family:
        found = ctx.workspace.class_of(key)
        if found is not None:
            out.append(found[0])
    return out


def _in_range(version: str, first: str, last: str | None) -> bool:
    key = version_key(version)
    return version_key(first) <= key and (last is None or key <= version_key(last))


class DeadOverride(Rule):
    """A Trainer subclass overrides a method that the target transformers release either no longer
    defines (`prediction_loop` was removed in 5.0), does not define yet (`_run_epoch` before 5.3), or
    defines but never calls any more (`create_optimizer_and_scheduler` since 5.1: `train()` calls
    `create_optimizer()` and `create_scheduler()` directly).

    Hooks removed before the catalogue's first release (4.36: `_load_state_dict_in_model`,
    `init_git_repo`) come from a sample of older releases, and a TRL base's method that an older TRL
    release had and the target TRL release no longer has (`DPOTrainer.get_batch_loss_metrics`, gone
    after 0.27) is dead the same way.

    The override is silently dead code: training runs, but without your change. Methods the library
    never called in any release (entry points such as `train` or `predict`, which *you* call) are not
    reported, nor are methods your project refers to itself (`self.prediction_loop(...)`, or
    `fn = self.prediction_loop if legacy else self.evaluation_loop`), nor properties.
    """

    FIX = (
        "Move the code to the method the target release calls instead (the message names it) or to a "
        "callback event; delete the override once nothing calls it."
    )
    EVIDENCE = (
        "https://github.com/unslothai/unsloth/pull/10887",
        "https://github.com/TIGER-AI-Lab/VLM2Vec/issues/45",
    )

    USE_INSTEAD = """
        from transformers import Trainer

        class MyTrainer(Trainer):
            def create_optimizer(self, model=None):
                return super().create_optimizer(model)

            def create_scheduler(self, num_training_steps, optimizer=None):
                return super().create_scheduler(num_training_steps, optimizer)
    """

    code = "TW102"
    FACTS = (
        METHODS,
        REFERENCED,
    )
    name = "dead-override"
    message = "this override of `{method}` silently does nothing; `{method}` {why}; {instead}"

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def create_optimizer_and_scheduler(self, num_training_steps):
                    super().create_optimizer_and_scheduler(num_training_steps)
            """,
            version="5.1.0",
            line=4,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def prediction_loop(self, *args, **kwargs):
                    return super().prediction_loop(*args, **kwargs)
            """,
            version="5.0.0",
            line=4,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def create_optimizer_and_scheduler(self, num_training_steps):
                    super().create_optimizer_and_scheduler(num_training_steps)
            """,
            version="4.57.6",
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def train(self, *args, **kwargs):  # an entry point the user calls
                    return super().train(*args, **kwargs)
            """
        ),
    )

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        if ctx.catalog is None or ctx.catalog_cls is None or ctx.view is None:
            return
        for method, fn in ctx.methods():
            if fn.name.startswith("__") or method.kind == "property":
                continue  # a property is read, never called by the loop: it cannot be a dead hook
            history = ctx.catalog.method_history(fn.name, cls=ctx.catalog_cls)
            if history is None:
                legacy = ctx.catalog.legacy_method(fn.name, cls=ctx.catalog_cls)
                if legacy is not None:
                    why = (
                        f"was removed from transformers before {legacy.gone_by} "
                        f"(defined in {legacy.first_seen}–{legacy.last_seen})"
                    )
                    yield Candidate(lambda c, fn=fn, why=why: self._dead(c, fn, why))  # type: ignore[misc]
                elif ctx.library_cls is not None and ctx.ever_library_method(fn.name):
                    yield Candidate(
                        lambda c, fn=fn: self._judge_library(c, fn),  # type: ignore[misc]
                        (library_fact(ctx.library_cls, fn.name), library_class_fact(ctx.library_cls)),
                    )
                continue
            yield Candidate(
                lambda c, fn=fn, history=history: self._judge(c, fn, history),  # type: ignore[misc]
                (trainer_fact(ctx.catalog_cls, fn.name),),
            )

    def _judge_library(self, ctx: ClassContext, fn: FunctionNode) -> Finding | None:
        """A method the TRL base defined in an older catalogued TRL release and no longer has at the
        target one (``DPOTrainer.get_batch_loss_metrics``, gone after TRL 0.27): nothing calls it."""
        assert ctx.library_catalog is not None and ctx.library_cls is not None
        if ctx.library_view is None or ctx.library_cls not in ctx.library_view.classes:
            return None  # the base itself is gone: resolution, not a dead hook
        if ctx.library_method(fn.name) is not None:
            return None
        history = ctx.library_catalog.method_history(fn.name, cls=ctx.library_cls)
        if history is None or history.last is None:
            return None
        if version_key(history.last) > version_key(ctx.library_view.version):
            return None  # added after the target release, not removed before it
        why = f"no longer exists in {ctx.library_label} (last defined in trl {history.last})"
        return self._dead(ctx, fn, why)

    def _judge(self, ctx: ClassContext, fn: FunctionNode, history: MethodHistory) -> Finding | None:
        assert ctx.catalog is not None and ctx.view is not None
        version = ctx.view.version
        info = ctx.trainer_method(fn.name)
        if info is None:
            if version_key(version) < version_key(history.first):
                why = f"does not exist in transformers {version} (added in {history.first})"
            elif history.last is not None:
                why = f"no longer exists in transformers {version} (last defined in {history.last})"
            else:  # pragma: no cover - a gap in coverage
                return None
        else:
            if info.kind == "property" or info.called:
                return None
            dead = next((r for r in history.never_called if _in_range(version, r[0], r[1])), None)
            if dead is None or dead[0] == history.first:
                return None  # never called in any release: an entry point, not a dead hook
            why = f"is no longer called by the Trainer of transformers {version} (not since {dead[0]})"
        return self._dead(ctx, fn, why)

    def _dead(self, ctx: ClassContext, fn: FunctionNode, why: str) -> Finding | None:
        """The finding for a dead override, unless the project calls the method itself."""
        assert ctx.catalog is not None and ctx.view is not None
        version = ctx.view.version
        if _referenced(ctx, fn.name):
            return None
        if ctx.catalog.guidance(fn.name) is not None:
            instead = "instead, " + alternative(ctx, fn.name)
        else:
            instead = DEAD_FALLBACK.get(fn.name, "instead, move the code to a method the training loop calls")
        return self.report(
            ctx,
            fn,
            self.message.format(method=fn.name, why=why, version=version, instead=instead),
            method=fn.name,
        )
