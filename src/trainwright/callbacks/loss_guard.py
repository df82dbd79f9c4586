"""Stop (or save and stop) on a non-finite loss or a loss spike, with one clear log line.

Replaces ``training_step`` / ``compute_loss`` overrides that check ``torch.isfinite(loss)`` or compare
the loss to a running average and raise or set a stop flag.
"""

from __future__ import annotations

import logging
import statistics
from typing import Any, ClassVar, Literal

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._logs import add_to_logs, is_finite_number, is_training_log
from trainwright.callbacks._state import RestorableState

logger = logging.getLogger(__name__)

Action = Literal["stop", "save_and_stop"]


class LossGuardCallback(TrainerCallback, RestorableState):
    """Watch the logged training loss; on a non-finite value or a spike, stop or save-and-stop.

    Replaces: ``training_step`` overrides that inspect the loss of every step.

    Event: ``on_log`` with the training log line (``loss`` = mean loss over the steps since the last
    log; set ``logging_steps=1`` to check every optimizer step). A trip is:

    - non-finite: ``loss`` (or ``grad_norm``, when ``check_grad_norm``) is NaN or ±inf. Note that
      ``TrainingArguments.logging_nan_inf_filter=True`` (the default) replaces non-finite *losses*
      with the running mean before they are logged, so only ``grad_norm`` shows them; set it to
      ``False`` to see them in ``loss``;
    - spike: ``loss > spike_factor × median(last `window` finite losses)``, once ``min_history`` losses
      are known and the median is positive (a spike test makes no sense around zero or for losses that
      are negative by design).

    ``on_log`` runs inside the Trainer's log/evaluate/save sequence *before* the save check, so
    ``action="save_and_stop"`` writes a checkpoint of that same step. Note that after a non-finite
    loss the weights may already be NaN; ``"stop"`` (default) keeps the last good checkpoint as the
    newest. The tripping log line also gets ``loss_guard/tripped = 1``.

    Stateful: the loss history (so the running median continues after resume), ``tripped_step`` and
    ``tripped_reason``.
    """

    _state_attributes: ClassVar[tuple[str, ...]] = ("history", "tripped_step", "tripped_reason")

    def __init__(
        self,
        spike_factor: float | None = 5.0,
        window: int = 20,
        min_history: int = 5,
        action: Action = "stop",
        check_grad_norm: bool = True,
    ) -> None:
        if spike_factor is not None and (not isinstance(spike_factor, (int, float)) or not spike_factor > 1):
            raise ValueError(
                f"spike_factor must be > 1 (or None to disable spike checks), got {spike_factor!r}"
            )
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        if not isinstance(min_history, int) or not 1 <= min_history <= window:
            raise ValueError(f"min_history must be an integer in [1, window={window}], got {min_history!r}")
        if action not in ("stop", "save_and_stop"):
            raise ValueError(f"action must be 'stop' or 'save_and_stop', got {action!r}")
        self.spike_factor = spike_factor
        self.window = window
        self.min_history = min_history
        self.action = action
        self.check_grad_norm = check_grad_norm
        self.history: list[float] = []
        self.tripped_step: int | None = None
        self.tripped_reason: str | None = None

    def _state_args(self) -> dict[str, Any]:
        return {
            "spike_factor": self.spike_factor,
            "window": self.window,
            "min_history": self.min_history,
            "action": self.action,
            "check_grad_norm": self.check_grad_norm,
        }

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.restore_state(state)
        if args.logging_nan_inf_filter:
            logger.info(
                "LossGuardCallback: logging_nan_inf_filter=True hides non-finite losses from the logs; "
                "only a non-finite grad_norm will trip the guard. Set logging_nan_inf_filter=False to see them."
            )

    def _reason(self, loss: Any, grad_norm: Any) -> str | None:
        if not is_finite_number(loss):
            return f"loss is {loss} (not finite)"
        if self.check_grad_norm and grad_norm is not None and not is_finite_number(grad_norm):
            return f"grad_norm is {grad_norm} (not finite)"
        if self.spike_factor is not None and len(self.history) >= self.min_history:
            median = statistics.median(self.history)
            if median > 0 and float(loss) > self.spike_factor * median:
                return (
                    f"loss {float(loss):.4g} is a spike: more than {self.spike_factor:g} × the running median "
                    f"{median:.4g} of the last {len(self.history)} logged losses"
                )
        return None

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is None or not is_training_log(logs):
            return
        reason = self._reason(logs["loss"], logs.get("grad_norm"))
        if reason is None:
            self.history = (self.history + [float(logs["loss"])])[-self.window :]
            return
        self.tripped_step = state.global_step
        self.tripped_reason = reason
        control.should_training_stop = True
        if self.action == "save_and_stop":
            control.should_save = True
        add_to_logs(state, logs, {"loss_guard/tripped": 1})
        logger.warning(
            "LossGuardCallback tripped at step %d: %s. %s.",
            state.global_step,
            reason,
            "Saving a checkpoint and stopping training"
            if self.action == "save_and_stop"
            else "Stopping training",
        )
