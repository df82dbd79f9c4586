"""TW201: the observing part of an override: timing, gated side effects, schedule updates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from trainwright_lint.analysis import kinds as K
from trainwright_lint.analysis.effects import EVENT_AT_RETURN, OWN_EVENTS
from trainwright_lint.analysis.facts import METHODS, OBSERVATION
from trainwright_lint.analysis.moves import events_in
from trainwright_lint.analysis.observing import line_list, spans
from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import WRAPPER_EVENTS, event_for_effects, reference
from trainwright_lint.rules._events import proven_move
from trainwright_lint.rules._move import MoveToCallback, plan_move
from trainwright_lint.rules.base import EVERY_RELEASE, MOVE_STATEMENTS, UNSAFE, ClassContext, Example, Rule

# What a finding's code does, the first verb of its message (``Finding.kind``), in the message's order.
TIMES, ADVANCES, RUNS, ADDS, KEEPS = "times", "advances", "runs", "adds", "keeps"


class MoveObservingToCallback(MoveToCallback):
    """TW201's move (unsafe): the statements to a callback event (``rules/_move.py``)."""


class TimingLogic(Rule):
    """An override of a Trainer method contains statements that only observe the loop or decide
    *when* something happens: clock reads around the `super()` call (step timing), logging,
    printing, tracker uploads, files, samples or `gc`/cache clearing gated on the global step, the
    epoch, an accumulation boundary, the clock or a metric (`if self.state.global_step % 100 == 0:`),
    output written around the `super()` call, a record kept on `self` after `super().log()` or
    `super().evaluate()` of what their events receive (`self.history.append(logs)`), or a
    hyper-parameter advanced per step (`self.temperature = ...global_step...`).

    That is what `TrainerCallback` events are for: they fire at a defined point of every step,
    epoch, log, evaluation or save, see `state` and `args`, and keep the Trainer subclass about
    *what* is computed. The finding points at the observing statements only (a step counter that
    feeds the data path is not part of it) and names the event pair and a trainwright reference
    callback when one fits.

    Not flagged: code that changes what the method computes or returns, statements copied from
    transformers' or TRL's own method (the upstream behaviour, not yours), `log` overrides that
    merge metrics into `logs`, values only the method can see recorded into `self` (a callback
    cannot see them), dunder methods, and methods that are not Trainer methods.
    """

    FIX = (
        "Move the observing statements to the callback event the message names and register the callback "
        "with `Trainer(callbacks=[...])` or `trainer.add_callback(...)`; keep in the override only what "
        "changes the computed result. The message names the event the code belongs to; the move that "
        "`fix --unsafe-fixes` writes (`--diff` shows it) runs the code when the override did: code before "
        "`super().training_step()` at `on_step_begin` and `on_substep_end` (right before each micro-batch, "
        "on the same step number), code after it at `on_substep_end` and `on_pre_optimizer_step` (right "
        "after each micro-batch, before the optimiser step, the model still in training mode), a timer "
        "around it from the first pair to the second (`on_optimizer_step` on releases before 4.45, which "
        "the fix says). Code after it that reads the gradients has no move: the Trainer clips them at the "
        "last micro-batch of a step before any event fires. In a `training_step` copied rather than extended "
        "(no `super()` call), the copied body stands for the call: code before all of it or after all of it "
        "moves the same way, code between its statements has no move. The moved code's `model` is the "
        "trainer's `model_wrapped`, the model the loop hands `training_step`. An `if`/`else` whose branches "
        "all move, moves whole. Code inside an `if` that stays in the override keeps "
        "that condition in the callback when the test reads only the trainer's own attributes and "
        "nothing left in the override changes them; under any other condition, a loop or a `try`, "
        "there is no move (and, without `--preview`, no finding). In a copy of `Trainer.log` that fires "
        "`on_log` itself, code after the dispatch that reads the record appended to `log_history` right "
        "before it reads it at `on_log` as `state.log_history[-1]`, the same object."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    USE_INSTEAD = """
        from transformers import Trainer
        from trainwright.callbacks import StepTimerCallback, attach

        trainer = Trainer(model=model, args=args)  # no training_step override
        attach(trainer, StepTimerCallback())  # logs step_time through on_step_begin / on_step_end
    """

    moves_only = True  # no move, no finding (``Rule.moves_only``)
    # In `training_step` overrides, the kinds of code the evidence does not back (docs/lint-accuracy.md,
    # "Preview variants"): the blind test split first, the dev split where the test split has no finding
    # with a move, off when neither has one. Timers: test 0 of 1 (2026-12-07). Added output: no test
    # finding, dev 0 of 1 (a hard negative). Records: no finding on either split. On: gated side effects
    # (`runs`, test 1 of 1) and schedules (`advances`, no test finding, dev 1 of 1, 2026-12-07)
    preview_variants: ClassVar[dict[str, frozenset[str]]] = {"training_step": frozenset({TIMES, ADDS, KEEPS})}
    code = "TW201"
    FACTS = (
        METHODS,
        OBSERVATION,
    )
    name = "timing-logic-in-override"
    release_facts = EVERY_RELEASE
    suggestion = MOVE_STATEMENTS
    fix_applicability = UNSAFE
    fix_module = "trainwright_lint.rules.tw201_timing_logic_fix"
    fix_pass = 8
    fix_title = "move the timing logic into a registered callback"
    message = "`{method}` {what} (line{s} {lines}); move {it} to a TrainerCallback on {event}"

    INVALID = (
        Example(
            """
            import time
            from transformers import Trainer

            class TimedTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    time_before = time.perf_counter()
                    output = super().training_step(model, inputs, num_items_in_batch)
                    self._step += 1
                    time_after = time.perf_counter()
                    self._step_time += time_after - time_before
                    if self._step % self.args.gradient_accumulation_steps == 0:
                        self._metrics["step_time"].append(self._step_time)
                        self._step_time = 0.0
                    return output

                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    inputs = self._buffer[self._step % len(self._buffer)]  # the counter feeds the data
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
            line=6,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    if self.state.global_step % 100 == 0:
                        print(f"step {self.state.global_step}: {loss.item()}")
                    return loss
            """,
            line=6,
        ),
        Example(
            """
            import gc, torch
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    if self.state.global_step % 50 == 0:
                        gc.collect()
                        torch.cuda.empty_cache()
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
            line=6,
            fixed="""
            import gc, torch
            from transformers import Trainer

            from transformers import TrainerCallback


            class MyTrainerComputeLossCallback(TrainerCallback):
                "Code of `MyTrainer.compute_loss`, moved here by `trainwright fix --unsafe-fixes`."

                def __init__(self, trainer):
                    self.trainer = trainer

                def on_step_begin(self, args, state, control, **kwargs):
                    trainer = self.trainer
                    if trainer.state.global_step % 50 == 0:
                        gc.collect()
                        torch.cuda.empty_cache()

                def on_substep_end(self, args, state, control, **kwargs):
                    trainer = self.trainer
                    if trainer.state.global_step % 50 == 0:
                        gc.collect()
                        torch.cuda.empty_cache()

                def on_prediction_step(self, args, state, control, **kwargs):
                    trainer = self.trainer
                    if trainer.state.global_step % 50 == 0:
                        gc.collect()
                        torch.cuda.empty_cache()


            class MyTrainer(Trainer):
                def __init__(self, *args, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.add_callback(MyTrainerComputeLossCallback(self))
            """,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    out = super().training_step(model, inputs, num_items_in_batch)
                    if self.state.epoch is not None and self.state.epoch >= 1:
                        self.sample_texts = self.generate_samples(model)
                    return out
            """,
            line=6,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
                    if self.state.global_step > 1000:
                        loss = loss * 0.5  # changes what is computed: a legitimate override
                    return loss
            """
        ),
        Example(
            """
            import torch
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    if (self.args.torch_empty_cache_steps is not None
                            and self.state.global_step % self.args.torch_empty_cache_steps == 0):
                        torch.cuda.empty_cache()
                    return loss
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def log(self, logs, start_time=None):
                    logs.update(self._extra_metrics)  # merging metrics gathered in compute_loss
                    self._extra_metrics.clear()
                    super().log(logs, start_time)
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for method, fn in ctx.methods():
            obs = ctx.observation(method, fn)
            if obs.wrapper or not obs.parts or obs.effects is None:
                continue
            effects = obs.effects
            event = _event(method.name, obs.reasons, obs.kinds, obs.gates)
            proof = proven_move(ctx, method.name, event)
            if not proof.proven:
                continue  # no event fires wherever the method runs: no move, no finding
            lines = line_list(effects, obs.parts)
            fix, note = plan_move(
                ctx, fn, effects, obs.parts, events_in(event), MoveObservingToCallback, proof.events
            )
            what = _what(obs.reasons, obs.kinds_by_reason, obs.gates)
            message = self.message.format(
                method=method.name,
                what=what,
                s="s" if ("," in lines or "–" in lines) else "",
                lines=lines,
                it="them" if len(obs.parts) > 1 else "it",
                event=written_events(fix, event),
            )
            first = effects.statements[obs.parts[0]].node
            moved = spans(effects, obs.parts)
            kind = what.split(" ", 1)[0]  # the message's first verb (``TIMES`` ...)
            yield self.report(
                ctx, first, message, method=method.name, moved=moved, fix=fix, fix_note=note, kind=kind
            )


def written_events(fix: MoveToCallback | None, advised: str) -> str:
    """The events the move writes (its edit's own list), where the message named others: ``on_step_end``
    advised for ``training_step`` is written per micro-batch as ``on_step_begin`` / ``on_substep_end``.
    The advice's reference callback is kept; an advice that asks to check a control flag
    (``on_step_end`` (``control.should_evaluate``)) is kept whole where the move writes that event: the
    move does not check it."""
    if fix is None or ("control." in advised and "on_step_end" in fix.event_names()):
        return advised
    ref = advised[advised.find(" (reference: ") :] if " (reference: " in advised else ""
    return " / ".join(f"`{e}`" for e in fix.event_names()) + ref


def _what(reasons: set[str], by_reason: dict[str, set[str]], gates: frozenset[str]) -> str:
    def shown_for(reason: str) -> list[str]:
        kinds = by_reason.get(reason, set())
        return sorted(k for k in kinds if k in K.OBSERVING_KINDS or k in (K.SCHEDULE, K.RECORD))

    parts = []
    if "timing" in reasons:
        parts.append(f"{TIMES} the `super()` call")
    if "schedule" in reasons:
        parts.append(f"{ADVANCES} a schedule per step")
    if "gated" in reasons:
        gate = ", ".join(sorted(g for g in gates if g in _GATE_WORDS))
        shown = shown_for("gated")
        parts.append(f"{RUNS} {', '.join(shown) or 'side effects'} gated on {gate or 'training progress'}")
    elif "output" in reasons:
        shown = shown_for("output")
        parts.append(f"{ADDS} {', '.join(shown) or 'output'} around the `super()` call")
    if "record" in reasons:
        parts.append(f"{KEEPS} a record of what its event receives, after the `super()` call")
    # One thing in the headline; the others follow as a clause of their own (text output: a help line).
    return "; it also ".join([parts[0], " and ".join(parts[1:])] if len(parts) > 1 else parts)


_GATE_WORDS = frozenset(
    {"the global step", "the epoch", "the accumulation boundary", "wall-clock time", "a metric"}
)


# Methods whose event fires once right after each call, on every path that calls them (``_save_checkpoint``:
# ``_maybe_log_save_evaluate`` dispatches ``on_save`` as it returns): gated output after the call keeps its
# gate at that event, as after ``evaluate`` (``EVENT_AT_RETURN``), instead of moving to a step event.
GATE_KEPT = frozenset({"_save_checkpoint"})


def _event(method: str, reasons: set[str], kinds: set[str], gates: frozenset[str]) -> str:
    if method in OWN_EVENTS and "timing" not in reasons:
        # ``log`` fires ``on_log`` itself, with the same ``logs``, wherever it is called
        return f"`{OWN_EVENTS[method]}`"
    if method in EVENT_AT_RETURN and "timing" not in reasons:
        # ``evaluate``/``predict`` fire their event as they return: gated code after them keeps its gate there
        return f"`{EVENT_AT_RETURN[method]}`"
    if method in GATE_KEPT and "gated" in reasons and "timing" not in reasons:
        event, callback = WRAPPER_EVENTS[method]
        return f"`{event}`" + reference(callback)
    if "timing" in reasons:
        events, callback = WRAPPER_EVENTS.get(method, ("on_step_begin -> on_step_end", "StepTimerCallback"))
        pair = " / ".join(f"`{e.strip()}`" for e in events.split("->"))
        return pair + reference(callback or "StepTimerCallback")
    if "schedule" in reasons and not ({"gated", "output"} & reasons):
        return "`on_step_begin`" + reference("ParameterScheduleCallback")
    if {"output", "record"} & reasons and "gated" not in reasons and method in WRAPPER_EVENTS:
        events, callback = WRAPPER_EVENTS[method]
        ref = reference(callback) if "output" in reasons else ""  # a timer is no reference for a record
        return " / ".join(f"`{e.strip()}`" for e in events.split("->")) + ref
    return event_for_effects(kinds, gates)
