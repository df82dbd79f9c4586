"""TW202: an override that only wraps ``super()`` with observing code."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.analysis import kinds as K
from trainwright_lint.analysis.effects import EVENT_AT_RETURN, MethodEffects
from trainwright_lint.analysis.facts import METHODS, OBSERVATION
from trainwright_lint.analysis.moves import events_in
from trainwright_lint.analysis.observing import line_list, spans
from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import WRAPPER_EVENTS, effect_reference, quoted_events, reference
from trainwright_lint.rules._events import proven_move
from trainwright_lint.rules._move import MoveToCallback, Planned, call_line, crosses_the_call, plan_move
from trainwright_lint.rules.base import EVERY_RELEASE, MOVE_WRAPPER, UNSAFE, ClassContext, Example, Rule
from trainwright_lint.rules.tw201_timing_logic import written_events
from trainwright_lint.syntax import FunctionNode

TIMER = "StepTimerCallback"


class MoveWrapperToCallback(MoveToCallback):
    """TW202's move (unsafe): the statements to a callback event (``rules/_move.py``)."""


class SideEffectWrapper(Rule):
    """An override whose only job is to wrap the `super()` call with timing, profiling (a
    profiling decorator or context included), logging, printing, tracker output, `gc`/cache
    clearing or file output, passing its own arguments through unchanged and returning the super
    result unchanged.

    The finding points at the observing statements (at the override itself when only a profiling
    decorator or context wraps it). Such an override changes nothing the Trainer computes; it only
    observes. Callback events bracket
    the same work (`on_step_begin`/`on_step_end` around a training step, `on_save` after a checkpoint,
    `on_log`, `on_evaluate`, ...) and survive upgrades because they are public API, while the override
    couples you to the method's signature. Overrides that change arguments, results or state another
    method reads to compute are not reported.
    """

    FIX = (
        "Delete the override and put the observing code in the callback event(s) the message names. When "
        "the code on one side of the `super()` call cannot move (it reads what the call returns, which no "
        "event receives), the other side moves alone if it shares no local with it; the note names the "
        "lines that stay in the override."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    USE_INSTEAD = """
        import logging
        from transformers import Trainer, TrainerCallback

        logger = logging.getLogger(__name__)

        class LogSaves(TrainerCallback):
            def on_save(self, args, state, control, **kwargs):
                logger.info("saved at step %d", state.global_step)

        trainer = Trainer(model=model, args=args, callbacks=[LogSaves()])
    """

    moves_only = True  # no move, no finding (``Rule.moves_only``)
    code = "TW202"
    FACTS = (
        METHODS,
        OBSERVATION,
    )
    name = "side-effect-wrapper"
    release_facts = EVERY_RELEASE
    suggestion = MOVE_WRAPPER
    fix_applicability = UNSAFE
    fix_module = "trainwright_lint.rules.tw202_side_effect_wrapper_fix"
    fix_pass = 7
    fix_title = "move the wrapper's side effects into a registered callback"
    message = "`{method}` only wraps `super().{method}()` with {effects}{where}; use the callback event(s) {events} instead{ref}"

    INVALID = (
        Example(
            """
            import time
            from transformers import Trainer

            class TimedTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    start = time.perf_counter()
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    self.step_times.append(time.perf_counter() - start)
                    return loss
            """,
            line=6,
            fixed="""
            import time
            from transformers import Trainer

            from transformers import TrainerCallback


            class TimedTrainerTrainingStepCallback(TrainerCallback):
                "Code of `TimedTrainer.training_step`, moved here by `trainwright fix --unsafe-fixes`."

                def __init__(self, trainer):
                    self.trainer = trainer

                def on_step_begin(self, args, state, control, **kwargs):
                    self.start = time.perf_counter()

                def on_substep_end(self, args, state, control, **kwargs):
                    trainer = self.trainer
                    trainer.step_times.append(time.perf_counter() - self.start)
                    self.start = time.perf_counter()

                def on_pre_optimizer_step(self, args, state, control, **kwargs):
                    trainer = self.trainer
                    trainer.step_times.append(time.perf_counter() - self.start)


            class TimedTrainer(Trainer):
                def __init__(self, *args, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.add_callback(TimedTrainerTrainingStepCallback(self))
            """,
        ),
        Example(
            """
            import logging
            from transformers import Trainer

            logger = logging.getLogger(__name__)

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial):
                    logger.info("saving checkpoint at step %d", self.state.global_step)
                    super()._save_checkpoint(model, trial)
            """,
            line=8,
        ),
        Example(
            """
            import torch
            from transformers import Trainer

            class ProfiledTrainer(Trainer):
                def evaluate(self, *args, **kwargs):
                    with torch.profiler.record_function("evaluate"):
                        return super().evaluate(*args, **kwargs)
            """,
            line=5,
        ),
        Example(
            """
            from transformers import Trainer
            from mylib.profiling import profiling_decorator

            class ProfiledTrainer(Trainer):
                @profiling_decorator
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
            line=6,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def log(self, logs, start_time=None):
                    logs["extra"] = self.extra_metric  # changes what is logged
                    super().log(logs, start_time)
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    inputs = self.augment(inputs)  # changes what is computed
                    return super().training_step(model, inputs, num_items_in_batch)
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for method, fn in ctx.methods():
            obs = ctx.observation(method, fn)
            if not obs.wrapper:
                continue
            kinds = obs.wrapper_kinds
            callback: str | None
            if K.SAMPLES in kinds:  # samples generated where the method's own event fires, or at evaluation
                events, callback = EVENT_AT_RETURN.get(method.name, "on_evaluate"), "SampleGenerationCallback"
            elif method.name in WRAPPER_EVENTS:
                events, callback = WRAPPER_EVENTS[method.name]
                if callback == TIMER and not kinds & {K.CLOCK, K.PROFILE}:
                    callback = effect_reference(kinds)  # a tracker around `evaluate` is no timer
            else:
                guidance = ctx.catalog.guidance(method.name) if ctx.catalog is not None else None
                events = (
                    " / ".join(guidance.events[:3])
                    if guidance is not None and guidance.events
                    else "on_step_begin -> on_step_end"
                )
                callback = guidance.callbacks[0] if guidance is not None and guidance.callbacks else None
            proof = proven_move(ctx, method.name, events)
            if not proof.proven:
                continue  # no event fires wherever the method runs: no move, no finding
            parts, planned = obs.wrapper_parts, Planned(None)
            if parts and obs.effects is not None:
                parts, planned = _movable_side(ctx, fn, obs.effects, parts, events_in(events), proof.events)
                if parts != obs.wrapper_parts:  # one side moves: name what it does, and what stays
                    kinds = (kinds & set().union(*map(obs.effects.kinds_under, parts))) or kinds
                    planned = planned._replace(
                        note=_kept_note(obs.effects, obs.wrapper_parts, parts, method.name)
                    )
            where = ""
            node: ast.AST = fn  # a profiling decorator or context alone: the override itself is the finding
            moved: tuple[tuple[int, int], ...] = ()
            if parts and obs.effects is not None:
                moved = spans(obs.effects, parts)
                lines = line_list(obs.effects, parts)
                where = f" (line{'s' if ',' in lines or '–' in lines else ''} {lines})"
                node = obs.effects.statements[parts[0]].node
            fix, note = planned
            message = self.message.format(
                method=method.name,
                effects=", ".join(sorted(kinds)),
                where=where,
                events=written_events(fix, quoted_events(events)),
                ref=reference(callback),
            )
            yield self.report(
                ctx, node, message, method=method.name, moved=moved, fix=fix, fix_note=note, kind="only"
            )


def _movable_side(
    ctx: ClassContext, fn: FunctionNode, effects: MethodEffects, parts: list[int], events: tuple[str, ...],
    also: tuple[str, ...],
) -> tuple[list[int], Planned]:  # fmt: skip
    """``parts`` and their move, or where they cannot move together, one side of the ``super()`` call
    alone when it can move and shares nothing with the other (no clock, no local), the side after the
    call first. TRL's ``_save_checkpoint`` writes its model card before the call (the checkpoint's push
    carries it: no move) and a state file into the checkpoint folder after it (``on_save``): the card
    stays, the file moves. A ``training_step`` that clears the cache before the call and checks the loss
    it returns after it (``torch.isnan(loss)``: no event receives the loss) keeps the check and moves the
    clearing to the events before each micro-batch
    (``tests/oracle/moves/print_before_step_result_check_kept.py``)."""
    planned = plan_move(ctx, fn, effects, parts, events, MoveWrapperToCallback, also)
    if planned.move is not None or effects.delegation is None:
        return parts, planned
    timed = any(effects.statements[j].kinds & {K.CLOCK, K.PROFILE} for i in parts for j in effects.under(i))
    if timed or crosses_the_call(effects, parts):
        return parts, planned
    split = call_line(effects)
    after = [i for i in parts if effects.statements[i].line > split]
    before = [i for i in parts if effects.statements[i].line < split]
    for side in (after, before):
        if side and side != parts:
            moved = plan_move(ctx, fn, effects, side, events, MoveWrapperToCallback, also)
            if moved.move is not None:
                return side, moved
    return parts, planned


def _kept_note(effects: MethodEffects, wrapper: list[int], moved: list[int], method: str) -> str:
    """What stays in the override when only one side of the ``super()`` call moves, and why: the
    result of the call, when the code left reads it (no event receives a step's loss)."""
    kept = [i for i in wrapper if i not in moved]
    lines = line_list(effects, kept)
    many = "," in lines or "–" in lines
    reads = {u for i in kept for j in effects.under(i) for u in effects.statements[j].uses}
    they, read, run = ("they", "read", "them") if many else ("it", "reads", "it")
    why = (
        f"{they} {read} what `super().{method}()` returns, which no callback event receives"
        if reads & effects.result_locals()
        else f"no callback event runs {run} where the override does"
    )
    return f"line{'s' if many else ''} {lines} stay{'' if many else 's'} in the override: {why}"
