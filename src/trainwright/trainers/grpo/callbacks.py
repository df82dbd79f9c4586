"""The callbacks ``GRPOTrainer`` attaches to itself (trainer-owned: a user never adds them).

Each keeps one piece of GRPO's state in step with the Trainer's events: the generation round's buffer in
every checkpoint (:class:`SaveRoundBufferCallback`), the adaptive entropy coefficient
(:class:`EntropyControlCallback`) and TRL's ``step_time`` metric (:class:`StepTimeCallback`). The state
itself lives beside the code that uses it (:mod:`.buffer`, :mod:`.entropy`, :mod:`.metrics`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks.checkpointed import CheckpointedCallback, checkpoint_folder
from trainwright.storage.atomic import atomic_write_bytes
from trainwright.trainers.common.metrics import MetricsWindow
from trainwright.trainers.grpo.buffer import BUFFER_FILE, BufferSchema, RoundBuffer
from trainwright.trainers.grpo.entropy import EntropyController


class SaveRoundBufferCallback(CheckpointedCallback):
    """Writes the trainer's current :class:`RoundBuffer` into every checkpoint folder, and hands the saved
    one back on resume.

    ``on_save`` runs on every process right after the Trainer wrote ``checkpoint-<global_step>``;
    :meth:`load_checkpoint` runs before training resumes (``TrainerSkeleton.train``).
    """

    def __init__(
        self,
        get_buffer: Callable[[], RoundBuffer],
        set_buffer: Callable[[RoundBuffer], None],
        rank: int,
        schema: Callable[[], BufferSchema] | None = None,
    ) -> None:
        self.get_buffer = get_buffer
        self.set_buffer = set_buffer
        self.rank = rank
        self.schema = schema

    def load_checkpoint(self, folder: str) -> bool:
        restored = RoundBuffer.load(folder, self.rank)
        if restored is None:
            return False
        problem = self.schema().problem(restored.micro_batches) if self.schema is not None else None
        if problem is not None:
            warnings.warn(
                f"{os.path.join(folder, BUFFER_FILE.format(rank=self.rank))} does not fit this run: {problem}. "
                "It is not used: the generation round will be regenerated (new completions), so the run will "
                "not match an uninterrupted one exactly",
                stacklevel=2,
            )
            return False
        self.set_buffer(restored)
        return True

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> TrainerControl:
        folder = checkpoint_folder(args, state)
        if not os.path.isdir(folder):
            return control
        try:
            self.get_buffer().save(folder, self.rank)
        except OSError as error:  # a full disk must not end the run: the checkpoint only lacks the buffer
            path = os.path.join(folder, BUFFER_FILE.format(rank=self.rank))
            with contextlib.suppress(OSError):
                os.remove(path)  # a stale buffer from an earlier save into this folder would be wrong
            warnings.warn(
                f"could not write the GRPO generation buffer {path} ({type(error).__name__}: {error}); "
                "training continues, and a resume from this checkpoint will regenerate the round",
                stacklevel=2,
            )
        return control


class EntropyControlCallback(CheckpointedCallback):
    """Runs :meth:`EntropyController.end_step` after each optimizer step, logs ``entropy_coef``, and keeps
    the adaptive controller's state in checkpoints (``entropy_ctrl_state.json``, TRL's file name)."""

    CHECKPOINT_FILE = "entropy_ctrl_state.json"

    def __init__(
        self,
        controller: EntropyController,
        metrics: MetricsWindow,
        reduce_sum: Callable[[torch.Tensor], torch.Tensor],
    ) -> None:
        self.controller = controller
        self.metrics = metrics
        self.reduce_sum = reduce_sum

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.controller.end_step(self.reduce_sum)
        self.metrics.add("train", "entropy_coef", self.controller.coef)

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        folder = checkpoint_folder(args, state)
        if not self.controller.adaptive or not args.should_save or not os.path.isdir(folder):
            return
        data = json.dumps(self.controller.state_dict()).encode()
        atomic_write_bytes(os.path.join(folder, self.CHECKPOINT_FILE), data)

    def load_checkpoint(self, folder: str) -> bool:
        if not self.controller.adaptive:
            return False
        path = os.path.join(folder, self.CHECKPOINT_FILE)
        try:
            with open(path, encoding="utf-8") as handle:
                self.controller.load_state_dict(json.load(handle))
        except (OSError, ValueError, KeyError, TypeError) as error:
            warnings.warn(
                f"{path} could not be read ({type(error).__name__}: {error}): the adaptive entropy coefficient "
                f"restarts from entropy_coef={self.controller.coef}, so the resumed run will differ",
                stacklevel=2,
            )
            return False
        return True


class StepTimeCallback(TrainerCallback):
    """``step_time``: seconds from ``on_step_begin`` to ``on_step_end``, one optimizer step (its micro-steps,
    generation included, and the update), averaged over the logging window like TRL's ``step_time``."""

    def __init__(self, metrics: MetricsWindow) -> None:
        self.metrics = metrics
        self._start: float | None = None

    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._start = time.perf_counter()

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self._start is not None:
            self.metrics.add("train", "step_time", time.perf_counter() - self._start)
            self._start = None
