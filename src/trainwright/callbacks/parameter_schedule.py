"""Anneal an attribute (a loss coefficient such as ``beta``, a temperature) over optimizer steps.

Replaces ``training_step`` / ``compute_loss`` overrides that recompute ``self.beta = f(self.state.global_step)``
before each step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._logs import add_to_logs, is_training_log

#: progress p in [0, 1] → interpolation weight w in [0, 1]; value = start + (end - start) · w
NAMED_SCHEDULES: dict[str, Callable[[float], float]] = {
    "constant": lambda p: 0.0,
    "linear": lambda p: p,
    "cosine": lambda p: (1.0 - math.cos(math.pi * p)) / 2.0,
}
KNOWN_SCHEDULES = (*NAMED_SCHEDULES, "exponential")

CustomSchedule = Callable[[int, int], float]


class ParameterScheduleCallback(TrainerCallback):
    """Set ``target.<attribute>`` before every optimizer step from a schedule over the steps.

    Replaces: ``training_step``/``compute_loss`` overrides that update a coefficient from
    ``self.state.global_step``.

    Events: ``on_train_begin`` (checks the attribute exists, sets the value for the starting step —
    also after resume) and ``on_step_begin`` (sets the value for the step about to run: with
    ``global_step = s`` optimizer steps done, progress is ``p = (s - start_step) / (end_step - start_step)``
    clipped to [0, 1]; ``end_step`` defaults to ``state.max_steps``). ``on_log`` adds the current value to
    the training log as ``log_key``.

    Named schedules: ``constant`` (stays at ``start``), ``linear``, ``cosine`` (half-cosine from start to
    end), ``exponential`` (geometric: ``start · (end/start)^p``; start and end non-zero, same sign). A
    custom schedule is a callable ``(step, max_steps) -> value`` (then ``start``/``end`` are unused).

    ``target`` is any object (a loss module, a config, the trainer itself) or the string ``"model"``
    for the model the Trainer trains; ``attribute`` may be dotted (``"generation_config.temperature"``).
    The value is a pure function of the step, so resuming continues the schedule without saved state.
    """

    def __init__(
        self,
        target: object,
        attribute: str,
        start: float = 1.0,
        end: float = 0.0,
        schedule: str | CustomSchedule = "linear",
        start_step: int = 0,
        end_step: int | None = None,
        log_key: str | None = None,
    ) -> None:
        if not isinstance(attribute, str) or not attribute or any(not part for part in attribute.split(".")):
            raise ValueError(f"attribute must be a non-empty (dotted) attribute name, got {attribute!r}")
        if isinstance(schedule, str):
            if schedule not in KNOWN_SCHEDULES:
                raise ValueError(
                    f"unknown schedule {schedule!r}; known: {', '.join(KNOWN_SCHEDULES)}, or a callable"
                )
            if schedule == "exponential" and (start == 0 or end == 0 or (start > 0) != (end > 0)):
                raise ValueError(
                    f"the exponential schedule needs non-zero start and end of the same sign, got {start}, {end}"
                )
        elif not callable(schedule):
            raise TypeError(
                f"schedule must be a name or a callable (step, max_steps) -> value, got {type(schedule).__name__}"
            )
        if not isinstance(start_step, int) or start_step < 0:
            raise ValueError(f"start_step must be an integer >= 0, got {start_step!r}")
        if end_step is not None and (not isinstance(end_step, int) or end_step <= start_step):
            raise ValueError(f"end_step must be an integer > start_step ({start_step}), got {end_step!r}")
        self.target = target
        self.attribute = attribute
        self.start = float(start)
        self.end = float(end)
        self.schedule = schedule
        self.start_step = start_step
        self.end_step = end_step
        self.log_key = log_key if log_key is not None else f"schedule/{attribute}"
        self.current_value: float | None = None

    def value_at(self, step: int, max_steps: int) -> float:
        """The value used for the optimizer step that starts after ``step`` completed steps."""
        if callable(self.schedule):
            return float(self.schedule(step, max_steps))
        end_step = self.end_step if self.end_step is not None else max_steps
        span = max(1, end_step - self.start_step)
        progress = min(1.0, max(0.0, (step - self.start_step) / span))
        if self.schedule == "exponential":
            return self.start * (self.end / self.start) ** progress
        return self.start + (self.end - self.start) * NAMED_SCHEDULES[self.schedule](progress)

    def _owner(self, model: Any) -> tuple[Any, str]:
        obj = model if isinstance(self.target, str) and self.target == "model" else self.target
        *path, name = self.attribute.split(".")
        walked: list[str] = []
        for part in path:
            if not hasattr(obj, part):
                raise AttributeError(
                    f"ParameterScheduleCallback: {type(obj).__name__} has no attribute {part!r} "
                    f"(resolving {'.'.join([*walked, part])!r} of {self.attribute!r})"
                )
            obj = getattr(obj, part)
            walked.append(part)
        if not hasattr(obj, name):
            raise AttributeError(
                f"ParameterScheduleCallback: {type(obj).__name__} has no attribute {name!r} to schedule "
                f"({self.attribute!r})"
            )
        return obj, name

    def _apply(self, state: TrainerState, model: Any) -> None:
        owner, name = self._owner(model)
        self.current_value = self.value_at(state.global_step, state.max_steps)
        setattr(owner, name, self.current_value)

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        self._apply(state, model)

    def on_step_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        self._apply(state, model)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is not None and is_training_log(logs) and self.log_key and self.current_value is not None:
            add_to_logs(state, logs, {self.log_key: self.current_value})
