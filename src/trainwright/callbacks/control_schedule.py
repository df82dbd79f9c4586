"""Evaluate / save / log at custom step schedules by setting ``TrainerControl`` flags.

Replaces ``_maybe_log_save_evaluate`` overrides that evaluate or save at extra steps (every N,
a list of steps, log-spaced, or "when the state says so").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

Predicate = Callable[[TrainerState], bool]


class Schedule:
    """A set of optimizer steps (``state.global_step`` values, counted from 1) at which something is due.

    Build one with :meth:`at`, :meth:`every`, :meth:`log_spaced` or :meth:`when`. A schedule is a pure
    function of the step and the state, so it continues correctly after resuming from a checkpoint.
    """

    def __init__(self, is_due: Callable[[int, TrainerState], bool], description: str) -> None:
        self._is_due = is_due
        self.description = description

    def is_due(self, step: int, state: TrainerState) -> bool:
        return bool(self._is_due(step, state))

    def __repr__(self) -> str:
        return f"Schedule({self.description})"

    @classmethod
    def at(cls, steps: Iterable[int]) -> Schedule:
        """Exactly these steps."""
        chosen = frozenset(steps)
        bad = sorted(s for s in chosen if not isinstance(s, int) or isinstance(s, bool) or s < 1)
        if bad:
            raise ValueError(f"Schedule.at: steps must be integers >= 1, got {bad!r}")
        if not chosen:
            raise ValueError("Schedule.at: needs at least one step")
        return cls(lambda step, state: step in chosen, f"at {sorted(chosen)}")

    @classmethod
    def every(cls, n: int, start: int = 0) -> Schedule:
        """Steps ``start + n, start + 2n, ...``."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"Schedule.every: n must be an integer >= 1, got {n!r}")
        if not isinstance(start, int) or start < 0:
            raise ValueError(f"Schedule.every: start must be an integer >= 0, got {start!r}")
        return cls(lambda step, state: step > start and (step - start) % n == 0, f"every {n} from {start}")

    @classmethod
    def log_spaced(cls, num: int, last: int | None = None) -> Schedule:
        """About ``num`` steps spaced geometrically from 1 to ``last`` (default: ``state.max_steps``).

        Dense early, sparse late — for learning curves on a log axis. Rounded steps that coincide are
        merged, so fewer than ``num`` steps can result for small ``last``.
        """
        if not isinstance(num, int) or num < 2:
            raise ValueError(f"Schedule.log_spaced: num must be an integer >= 2, got {num!r}")
        if last is not None and (not isinstance(last, int) or last < 1):
            raise ValueError(f"Schedule.log_spaced: last must be an integer >= 1, got {last!r}")
        cache: dict[int, frozenset[int]] = {}

        def steps_for(end: int) -> frozenset[int]:
            if end not in cache:
                cache[end] = frozenset(
                    max(1, round(math.exp(math.log(end) * i / (num - 1)))) for i in range(num)
                )
            return cache[end]

        def is_due(step: int, state: TrainerState) -> bool:
            end = last if last is not None else state.max_steps
            return end >= 1 and step in steps_for(end)

        return cls(is_due, f"{num} log-spaced steps up to {last if last is not None else 'max_steps'}")

    @classmethod
    def when(cls, predicate: Predicate) -> Schedule:
        """Whenever ``predicate(state)`` is true (checked once per optimizer step, after ``global_step`` moved)."""
        if not callable(predicate):
            raise TypeError(f"Schedule.when: predicate must be callable, got {type(predicate).__name__}")
        name = getattr(predicate, "__name__", type(predicate).__name__)
        return cls(lambda step, state: predicate(state), f"when {name}")

    def steps_until(self, last: int, state: TrainerState | None = None) -> list[int]:
        """The due steps in ``1..last`` (for documentation and tests; predicates see ``state``)."""
        state = state if state is not None else TrainerState(max_steps=last)
        return [step for step in range(1, last + 1) if self.is_due(step, state)]


ScheduleLike = Schedule | int | Iterable[int] | Predicate


def as_schedule(spec: ScheduleLike | None, what: str) -> Schedule | None:
    """``int`` → every N; iterable of ints → those steps; callable → predicate on the state."""
    if spec is None or isinstance(spec, Schedule):
        return spec
    if isinstance(spec, bool):
        raise TypeError(
            f"{what}: a bool is not a schedule; pass an int N, a list of steps, a predicate or a Schedule"
        )
    if isinstance(spec, int):
        return Schedule.every(spec)
    if callable(spec):
        return Schedule.when(spec)
    if isinstance(spec, Iterable) and not isinstance(spec, (str, bytes)):
        return Schedule.at(spec)
    raise TypeError(
        f"{what}: expected an int N, a list of steps, a predicate on TrainerState or a Schedule, "
        f"got {type(spec).__name__}"
    )


class ControlScheduleCallback(TrainerCallback):
    """Set ``should_evaluate`` / ``should_save`` / ``should_log`` on custom step schedules.

    Replaces: ``_maybe_log_save_evaluate`` overrides (and ``training_step`` hacks) that evaluate,
    save or log at extra steps.

    Event: ``on_step_end``, which runs after ``DefaultFlowCallback`` has set the flags from the
    ``TrainingArguments`` strategies and right before the Trainer acts on them; this callback only
    turns flags on, so the argument-driven schedule keeps working alongside it. Saving works with
    ``save_strategy="no"``; evaluating needs an ``eval_dataset``.

    Each schedule accepts an ``int`` (every N steps), a list of steps, a predicate ``state -> bool``,
    or a :class:`Schedule`.
    """

    def __init__(
        self,
        evaluate: ScheduleLike | None = None,
        save: ScheduleLike | None = None,
        log: ScheduleLike | None = None,
    ) -> None:
        self.evaluate = as_schedule(evaluate, "ControlScheduleCallback(evaluate=...)")
        self.save = as_schedule(save, "ControlScheduleCallback(save=...)")
        self.log = as_schedule(log, "ControlScheduleCallback(log=...)")
        if self.evaluate is None and self.save is None and self.log is None:
            raise ValueError("ControlScheduleCallback needs at least one of evaluate=, save=, log=")

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        step = state.global_step
        if self.evaluate is not None and self.evaluate.is_due(step, state):
            control.should_evaluate = True
        if self.save is not None and self.save.is_due(step, state):
            control.should_save = True
        if self.log is not None and self.log.is_due(step, state):
            control.should_log = True
