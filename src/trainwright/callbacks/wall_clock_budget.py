"""Save a checkpoint and stop cleanly before a wall-clock budget (a job's time limit) runs out.

Replaces ``training_step`` / ``_inner_training_loop`` overrides that check ``time.time()`` against a
deadline and call ``save_model`` themselves (often leaving no optimizer/RNG state to resume from).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._state import RestorableState

logger = logging.getLogger(__name__)


class WallClockBudgetCallback(TrainerCallback, RestorableState):
    """Stop (after a full checkpoint) when one more step and a save would not fit in the budget.

    Replaces: overrides that poll a deadline inside the training loop.

    Events: ``on_step_end`` decides — it runs after the ``global_step`` increment and before the
    Trainer's log/eval/save of that step, so setting ``should_save`` and ``should_training_stop``
    there produces a regular checkpoint (weights, optimizer, scheduler, RNG, trainer state) and a clean
    exit. The rule is ``used + next_step + save + safety_margin > budget``, where ``next_step`` is the
    longest interval between two step ends seen so far (it includes data loading, logging and
    evaluation) and ``save`` the longest checkpoint save seen (timed from ``on_step_end`` to
    ``on_save``; 0 until the first save — cover the first one with ``safety_margin_seconds``).

    ``scope="session"`` measures from ``on_train_begin`` (or ``start_time``, e.g. the process start)
    of this run: a job time limit. ``scope="total"`` adds the time used before the checkpoint this run
    resumed from (kept in the checkpoint): a budget for the whole training.

    Stateful: ``elapsed_before``, ``stopped_at_step`` and the step/save estimates survive
    checkpoint/resume.
    """

    _state_attributes: ClassVar[tuple[str, ...]] = (
        "elapsed_before",
        "stopped_at_step",
        "max_step_seconds",
        "max_save_seconds",
    )

    def __init__(
        self,
        budget_seconds: float,
        safety_margin_seconds: float = 0.0,
        save: bool = True,
        scope: Literal["session", "total"] = "session",
        start_time: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (
            not isinstance(budget_seconds, (int, float))
            or not math.isfinite(budget_seconds)
            or budget_seconds <= 0
        ):
            raise ValueError(f"budget_seconds must be a finite number > 0, got {budget_seconds!r}")
        if (
            not isinstance(safety_margin_seconds, (int, float))
            or not 0 <= safety_margin_seconds < budget_seconds
        ):
            raise ValueError(
                f"safety_margin_seconds must be >= 0 and < budget_seconds ({budget_seconds}), "
                f"got {safety_margin_seconds!r}"
            )
        if scope not in ("session", "total"):
            raise ValueError(f"scope must be 'session' or 'total', got {scope!r}")
        self.budget_seconds = float(budget_seconds)
        self.safety_margin_seconds = float(safety_margin_seconds)
        self.save = save
        self.scope = scope
        self.start_time = start_time
        self.clock = clock
        self.elapsed_before = 0.0
        self.stopped_at_step: int | None = None
        self.max_step_seconds = 0.0
        self.max_save_seconds = 0.0
        self._session_start: float | None = None
        self._last_step_end: float | None = None
        self._save_started: float | None = None

    def _state_args(self) -> dict[str, Any]:
        return {
            "budget_seconds": self.budget_seconds,
            "safety_margin_seconds": self.safety_margin_seconds,
            "save": self.save,
            "scope": self.scope,
        }

    def state(self) -> dict[str, Any]:
        # what is saved into a checkpoint includes the time of this session so far
        exported = super().state()
        exported["attributes"]["elapsed_before"] = self.used_seconds()
        return exported

    def used_seconds(self) -> float:
        """Seconds counted against the budget so far."""
        session = 0.0 if self._session_start is None else self.clock() - self._session_start
        return session + (self.elapsed_before if self.scope == "total" else 0.0)

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.restore_state(state)
        if self.scope == "session":
            self.elapsed_before = 0.0
        self.stopped_at_step = None
        self._session_start = self.start_time if self.start_time is not None else self.clock()
        self._last_step_end = self.clock()

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        now = self.clock()
        if self._last_step_end is not None:
            self.max_step_seconds = max(self.max_step_seconds, now - self._last_step_end)
        self._last_step_end = now
        used = self.used_seconds()
        needed = (
            self.max_step_seconds + (self.max_save_seconds if self.save else 0.0) + self.safety_margin_seconds
        )
        if used + needed > self.budget_seconds and not control.should_training_stop:
            self.stopped_at_step = state.global_step
            control.should_training_stop = True
            if self.save:
                control.should_save = True
            logger.warning(
                "WallClockBudgetCallback: %.1fs of the %.1fs budget used at step %d; the next step and a save "
                "need about %.1fs more, so %s training now.",
                used,
                self.budget_seconds,
                state.global_step,
                needed,
                "saving a checkpoint and stopping" if self.save else "stopping",
            )
        self._save_started = now if control.should_save else None

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self._save_started is not None:
            self.max_save_seconds = max(self.max_save_seconds, self.clock() - self._save_started)
            self._save_started = None
