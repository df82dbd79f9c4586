"""Callbacks whose state lives in checkpoint folders, and how a resume gives it back.

Why: the Trainer restores what it saved itself (weights, optimizer, RNG, ``TrainerState``), but a
callback is never told which checkpoint a run resumes from. A :class:`CheckpointedCallback` writes its
state in ``on_save`` and gets it back from the trainer's ``train`` (:func:`restore_from_checkpoint`,
called by :func:`trainwright.trainers.common.construction.resolve_resume`). TR-DPO's reference
(:mod:`~trainwright.callbacks.reference_sync`) and GRPO's adaptive entropy coefficient are such state.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from transformers import TrainerCallback, TrainerState, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR


class CheckpointedCallback(TrainerCallback):
    """A trainer-owned callback whose state lives in checkpoint folders (saved in ``on_save``).

    Restoring happens in the trainer's ``train`` (callbacks are not told which checkpoint a run resumes
    from): it calls :meth:`load_checkpoint` on each of these, see :func:`restore_from_checkpoint`.
    """

    def load_checkpoint(self, folder: str) -> bool:
        """Restore the state saved in ``folder``; return whether there was any."""
        raise NotImplementedError


def restore_from_checkpoint(callbacks: Iterable[TrainerCallback], folder: str) -> None:
    """Let every :class:`CheckpointedCallback` in ``callbacks`` restore its state from ``folder``."""
    for callback in callbacks:
        if isinstance(callback, CheckpointedCallback):
            callback.load_checkpoint(folder)


def checkpoint_folder(args: TrainingArguments, state: TrainerState) -> str:
    """The folder the Trainer just wrote for this ``on_save`` (``output_dir/checkpoint-<step>``)."""
    return os.path.join(args.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}")


__all__ = ["CheckpointedCallback", "checkpoint_folder", "restore_from_checkpoint"]
