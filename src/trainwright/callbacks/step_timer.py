"""Step time, samples/s and tokens/s in the training logs.

Replaces ``training_step`` / ``_maybe_log_save_evaluate`` / ``log`` overrides that wrap the step in
``time.perf_counter()`` calls and push throughput numbers into ``logs``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._logs import add_to_logs, is_training_log

logger = logging.getLogger(__name__)


class StepTimerCallback(TrainerCallback):
    """Add ``{prefix}step_time_s``, ``{prefix}samples_per_s`` and ``{prefix}tokens_per_s`` to each training log.

    Replaces: ``training_step`` or ``_maybe_log_save_evaluate`` overrides that time steps by hand.

    Events: ``on_step_begin`` → ``on_step_end`` bracket one optimizer step (all its micro-batches;
    since transformers 4.46 the batches are fetched *before* ``on_step_begin``, so data loading is
    excluded). The values are means over the steps since the previous training log, added in
    ``on_log`` to the log line with ``loss`` (eval lines and the final summary are left alone).

    - samples/s uses the nominal samples per optimizer step,
      ``per_device_train_batch_size × gradient_accumulation_steps × world_size`` (a short last batch
      is counted as full);
    - tokens/s needs ``TrainingArguments(include_num_input_tokens_seen="non_padding")``: the Trainer
      then counts the non-pad tokens of every micro-batch (``attention_mask.sum()``) into
      ``state.num_input_tokens_seen``, and this callback divides the increase over the window by the
      window's step time. With ``"all"`` padding is counted too; with ``"no"`` tokens/s is omitted.
      (The Trainer's own ``train_tokens_per_second`` is an average since ``train()`` started, wall time
      including evaluation and saving; these are per-window, step time only.)

    To have these values reach W&B / TensorBoard, register with ``trainwright.callbacks.attach``.
    """

    def __init__(self, prefix: str = "perf/", clock: Callable[[], float] = time.perf_counter) -> None:
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
        self.prefix = prefix
        self.clock = clock
        self._reset_window()
        self._step_start: float | None = None
        self._tokens_at_step_start = 0
        self._samples_per_step = 0
        self._count_tokens = False

    def _reset_window(self) -> None:
        self._window_seconds = 0.0
        self._window_steps = 0
        self._window_tokens = 0

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._reset_window()
        self._samples_per_step = (
            args.per_device_train_batch_size * args.gradient_accumulation_steps * max(1, args.world_size)
        )
        mode = args.include_num_input_tokens_seen
        self._count_tokens = mode != "no"
        if not self._count_tokens:
            logger.info(
                "StepTimerCallback: tokens/s is off; set TrainingArguments(include_num_input_tokens_seen="
                "'non_padding') to log it."
            )
        elif mode == "all":
            logger.info("StepTimerCallback: include_num_input_tokens_seen='all' counts padding in tokens/s.")

    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._step_start = self.clock()
        self._tokens_at_step_start = state.num_input_tokens_seen

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self._step_start is None:
            return
        self._window_seconds += self.clock() - self._step_start
        self._window_steps += 1
        self._window_tokens += state.num_input_tokens_seen - self._tokens_at_step_start
        self._step_start = None

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is None or not is_training_log(logs) or self._window_steps == 0:
            return
        seconds = self._window_seconds
        values: dict[str, float] = {f"{self.prefix}step_time_s": seconds / self._window_steps}
        if seconds > 0:
            values[f"{self.prefix}samples_per_s"] = self._window_steps * self._samples_per_step / seconds
            if self._count_tokens:
                values[f"{self.prefix}tokens_per_s"] = self._window_tokens / seconds
        add_to_logs(state, logs, values)
        self._reset_window()
