"""What a child training script of the kill tests imports: where to train, and how to report its saves.

A child script (see ``kill_harness.run_kill_chain``) is Python text run in a forked process. It must

1. resume with ``newest_complete_checkpoint(output_dir())`` and report it: ``emit("RESUMED", path)``;
2. add :class:`SaveProbe` with ``trainer.add_callback(SaveProbe())`` *after* building the trainer, so
   that it runs after every ``on_save`` writer (the guard included): its ``SAVED`` event then means
   the checkpoint was finished, which is what the test checks the resume against;
3. train with ``save_steps=1`` and ``logging_strategy="no"``, so that ``SAVING`` (sent at
   ``on_step_end``) is immediately followed by the Trainer's ``_save_checkpoint``.

A child whose trainer resolves ``train(resume_from_checkpoint=True)`` itself (``DPOTrainer``,
``GRPOTrainer``) replaces step 1 by :func:`report_resume`, which reports the folder the trainer really
hands ``Trainer.train``. Events of other kinds (``PARAMS`` from
:class:`ParamDigest`) are collected by the harness per process (``ChainReport.extra``); add such
callbacks *before* :class:`SaveProbe`, so that their work is done before ``SAVING`` starts the clock.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

from transformers import TrainerCallback

_events_fd: int | None = None
_output_dir: str | None = None
_stop_after: int | None = None


def configure(events_path: str, output_dir: str, stop_after: int | None) -> None:
    """Called by the zygote in the forked child before the script runs."""
    global _events_fd, _output_dir, _stop_after
    _events_fd = os.open(events_path, os.O_WRONLY)
    _output_dir = output_dir
    _stop_after = stop_after


def output_dir() -> str:
    """The training output directory the chain shares between its processes."""
    assert _output_dir is not None, "kill_child.configure was not called"
    return _output_dir


def emit(kind: str, value: Any) -> None:
    """Send one event line ``KIND VALUE MONOTONIC_TIME`` to the test (one unbuffered write: it reaches the
    pipe before the next instruction, so a kill right after cannot lose it)."""
    assert _events_fd is not None, "kill_child.configure was not called"
    os.write(_events_fd, f"{kind} {value} {time.monotonic():.6f}\n".encode())


class SaveProbe(TrainerCallback):
    """Reports ``BEGIN <global_step>``, ``SAVING <step>`` (a save is about to start) and ``SAVED <step>``."""

    def __init__(self) -> None:
        self.steps = 0

    def on_train_begin(self, args, state, control, **kwargs):
        emit("BEGIN", state.global_step)

    def on_step_end(self, args, state, control, **kwargs):
        self.steps += 1
        if _stop_after is not None and self.steps >= _stop_after:
            control.should_training_stop = True
        if control.should_save:
            emit("SAVING", state.global_step)
        return control

    def on_save(self, args, state, control, **kwargs):
        emit("SAVED", state.global_step)


def report_resume() -> None:
    """Send ``RESUMED <folder>`` with the checkpoint ``Trainer.train`` is really handed.

    Wraps ``transformers.Trainer.train`` in this process only (a forwarding spy, no behaviour change):
    a subclass's ``train`` that resolves ``resume_from_checkpoint=True`` itself and then calls
    ``super().train(resume_from_checkpoint=folder)`` reports ``folder``. A ``True`` that reaches the
    Trainer unresolved is reported as the folder the Trainer turns it into (``get_last_checkpoint``).
    """
    import transformers
    from transformers.trainer_utils import get_last_checkpoint

    train = transformers.Trainer.train

    def spy(self, resume_from_checkpoint=None, *args, **kwargs):
        folder = resume_from_checkpoint
        if folder is True:
            folder = get_last_checkpoint(self.args.output_dir)
        emit("RESUMED", folder)
        return train(self, resume_from_checkpoint, *args, **kwargs)

    transformers.Trainer.train = spy


def param_digest(model: Any) -> str:
    """SHA-256 of every parameter's name and raw bytes (bit-identical parameters ⇔ equal digests)."""
    import torch

    digest = hashlib.sha256()
    for name, param in model.named_parameters():
        digest.update(name.encode())
        digest.update(param.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


class ParamDigest(TrainerCallback):
    """Reports ``PARAMS <global_step>:<digest>`` after every optimizer step (add it before SaveProbe)."""

    def on_step_end(self, args, state, control, model=None, **kwargs):
        emit("PARAMS", f"{state.global_step}:{param_digest(model)}")
