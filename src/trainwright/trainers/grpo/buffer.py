"""The generation buffer: one round's scored micro-batches, and how it survives a checkpoint.

Why checkpoint it: a round feeds ``steps_per_generation × num_iterations`` micro-steps, so a
checkpoint usually falls in the middle of a round. TRL drops the buffer and regenerates on resume,
which changes the completions (new samples), hence the gradients, hence the whole rest of the run.
We write each process's buffer into the checkpoint folder (``on_save`` of a callback, a public
route) and load it back before training resumes (:meth:`.callbacks.SaveRoundBufferCallback.load_checkpoint`).
Random state: a round's completions are sampled from an RNG seeded by ``(seed, process, epoch,
round)`` (``GenerationRounds.generation_rng``), so they do not depend on what ran before; the global RNG
(dropout, ...) comes back through the Trainer's own ``rng_state*.pth``. Together they make a resumed run continue exactly as the uninterrupted one.

Crashes: the file is written to a temporary file in the checkpoint folder, fsynced and renamed over
``grpo_buffer_rank<r>.pt``, so a ``kill -9`` during the save leaves the old file or the new one, never
an empty or truncated one (the audit found 6 torn files in 15 kills with a plain ``torch.save``). A
torn file from an older version, or one damaged later, is treated like a missing one: resume warns
and regenerates the round, which is always correct, only not bit-identical to the uninterrupted run.

Trust: a checkpoint may come from someone else, and its completion marker (sizes only) proves nothing
about its content. The buffer is read with tensors and plain data only
(:mod:`trainwright.storage.tensor_files`); a file that names anything else is refused without running
it (a warning; the round is regenerated), and its structure is checked before it is used.

Fit: a buffer is used only if it fits the resumed run (:class:`BufferSchema`): as many micro-batches as
``steps_per_generation``, ``per_device_train_batch_size`` rows each, the tensors the loss reads with
matching shapes, token ids inside the vocabulary, prompt indices inside the micro-batch, finite
advantages and log-probs. A buffer that does not fit (a resume with another ``steps_per_generation`` or
batch size, a foreign or damaged file of plain tensors) is a warning saying why, and the round is
regenerated, never a crash in the middle of a step nor training on rows of another configuration.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

from trainwright.storage.tensor_files import UNREADABLE, load_tensor_file, save_tensor_file, why_unusable

BUFFER_FILE = "grpo_buffer_rank{rank}.pt"


@dataclass
class RoundBuffer:
    """The micro-batches of the current round, keyed by ``(epoch, round)`` of the sampler."""

    key: tuple[int, int] | None = None
    micro_batches: list[dict[str, Any]] = field(default_factory=list)

    def matches(self, key: tuple[int, int]) -> bool:
        return self.key == key and bool(self.micro_batches)

    def state_dict(self) -> dict[str, Any]:
        return {"key": self.key, "micro_batches": self.micro_batches}

    def save(self, folder: str, rank: int) -> str:
        """Write the buffer to ``folder`` atomically and durably (see the module docstring); return the path."""
        path = os.path.join(folder, BUFFER_FILE.format(rank=rank))
        save_tensor_file(self.state_dict(), path)
        return path

    @classmethod
    def load(cls, folder: str, rank: int) -> RoundBuffer | None:
        """The buffer saved in ``folder`` by process ``rank``, or ``None`` if there is none or it is unusable.

        An empty, truncated or otherwise unreadable file (a crash while an older version wrote it), one
        that holds anything but tensors and plain data (never unpickled: ``weights_only=True``), or one
        of the wrong structure gives ``None`` with a warning, exactly like a missing file:
        ``GRPOTrainer`` then regenerates the round.
        """
        path = os.path.join(folder, BUFFER_FILE.format(rank=rank))
        if not os.path.exists(path):
            return None
        try:
            key, micro_batches = _checked_state(load_tensor_file(path))
        except UNREADABLE as error:  # regenerating the round is always correct
            size = os.path.getsize(path) if os.path.exists(path) else 0
            warnings.warn(
                f"{path} {why_unusable(error, size, path)}. Resuming without it: the generation round will be "
                "regenerated (new completions), so the run will not match an uninterrupted one exactly",
                stacklevel=2,
            )
            return None
        return cls(key=key, micro_batches=micro_batches)


def _checked_state(state: Any) -> tuple[tuple[int, int] | None, list[dict[str, Any]]]:
    """``(key, micro_batches)`` of a loaded buffer, after checking it is what :meth:`RoundBuffer.save`
    writes (a dict with a ``(epoch, round)`` key and a list of dicts of named tensors)."""
    if not isinstance(state, dict):
        raise TypeError(f"the file holds a {type(state).__name__}, not a dict")
    key, micro_batches = state["key"], state["micro_batches"]
    if key is not None and not (
        isinstance(key, (tuple, list)) and len(key) == 2 and all(type(k) is int for k in key)
    ):
        raise ValueError(f"key is {key!r}, not an (epoch, round) pair of ints")
    if not isinstance(micro_batches, list):
        raise TypeError(f"micro_batches is a {type(micro_batches).__name__}, not a list")
    for part in micro_batches:
        if not isinstance(part, dict) or not all(
            isinstance(name, str) and isinstance(value, torch.Tensor) for name, value in part.items()
        ):
            raise TypeError("a micro-batch is not a dict of named tensors")
    return (tuple(key) if key is not None else None), micro_batches  # type: ignore[return-value]


#: what every micro-batch holds (:func:`~trainwright.trainers.grpo.round_data.split_round`)
_IDS = ("prompt_ids", "prompt_mask", "completion_ids", "completion_mask")
_PER_ROW = ("advantages", "prompt_inverse")


@dataclass(frozen=True)
class BufferSchema:
    """What a round's micro-batches look like in this run; a saved buffer must fit it to be used."""

    micro_batches: int  # steps_per_generation
    rows: int  # per_device_train_batch_size
    vocab_size: int
    logps: tuple[str, ...] = ()  # old_per_token_logps / ref_per_token_logps, when the loss reads them

    def problem(self, micro_batches: list[dict[str, Any]]) -> str | None:
        """Why ``micro_batches`` cannot feed this run, or ``None`` when they fit."""
        if len(micro_batches) != self.micro_batches:
            return (
                f"it holds {len(micro_batches)} micro-batches and this run's steps_per_generation is "
                f"{self.micro_batches}"
            )
        for index, part in enumerate(micro_batches):
            problem = self._part_problem(part)
            if problem is not None:
                return f"micro-batch {index} {problem}"
        return None

    def _part_problem(self, part: dict[str, torch.Tensor]) -> str | None:
        needed = (*_IDS, *_PER_ROW, "prompt_rows", "tokens_per_micro_step", *self.logps)
        missing = [name for name in needed if name not in part]
        if missing:
            return f"lacks {', '.join(missing)}"
        rows = part["prompt_ids"].shape[0] if part["prompt_ids"].dim() == 2 else -1
        if rows != self.rows:
            return f"has {rows} rows and this run's per_device_train_batch_size is {self.rows}"
        shapes = {name: part[name.replace("mask", "ids")].shape for name in _IDS}
        shapes.update({name: part["completion_ids"].shape for name in self.logps})
        shapes.update({name: torch.Size([rows]) for name in _PER_ROW})
        for name, shape in shapes.items():
            if part[name].shape != shape:
                return f"{name} has shape {tuple(part[name].shape)}, not {tuple(shape)}"
        return self._value_problem(part, rows)

    def _value_problem(self, part: dict[str, torch.Tensor], rows: int) -> str | None:
        for name in (*_IDS, "prompt_rows", "prompt_inverse"):
            if part[name].is_floating_point() or part[name].is_complex():
                return f"{name} is {part[name].dtype}, not integer"
        ids = torch.cat([part["prompt_ids"].flatten(), part["completion_ids"].flatten()])
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.vocab_size):
            return f"has token ids outside the vocabulary (0..{self.vocab_size - 1})"
        distinct = part["prompt_rows"]
        if (
            distinct.dim() != 1
            or not _within(distinct, rows)
            or not _within(part["prompt_inverse"], len(distinct))
        ):
            return "has prompt_rows / prompt_inverse indices outside the micro-batch"
        for name in ("advantages", "tokens_per_micro_step", *self.logps):
            if not torch.isfinite(part[name]).all():
                return f"has non-finite {name}"
        return None


def _within(index: torch.Tensor, size: int) -> bool:
    """All of ``index`` lies in ``0..size-1``."""
    return index.numel() == 0 or (int(index.min()) >= 0 and int(index.max()) < size)
