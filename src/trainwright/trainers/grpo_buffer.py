"""The generation buffer: one round's scored micro-batches, and how it survives a checkpoint.

Why checkpoint it: a round feeds ``steps_per_generation × num_iterations`` micro-steps, so a
checkpoint usually falls in the middle of a round. TRL drops the buffer and regenerates on resume,
which changes the completions (new samples), hence the gradients, hence the whole rest of the run.
We write each process's buffer into the checkpoint folder (``on_save`` of a callback, a public
route) and load it back in ``GRPOTrainer.train``. Random state: a round's completions are sampled
from an RNG seeded by ``(seed, process, epoch, round)`` (``GRPOTrainer.generation_rng``), so they
do not depend on what ran before; the global RNG (dropout, ...) comes back through the Trainer's own
``rng_state*.pth``. Together they make a resumed run continue exactly as the uninterrupted one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import TrainerCallback

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
        path = os.path.join(folder, BUFFER_FILE.format(rank=rank))
        torch.save(self.state_dict(), path)
        return path

    @classmethod
    def load(cls, folder: str, rank: int) -> RoundBuffer | None:
        """The buffer saved in ``folder`` by process ``rank``, or ``None`` if there is none."""
        path = os.path.join(folder, BUFFER_FILE.format(rank=rank))
        if not os.path.exists(path):
            return None
        state = torch.load(path, map_location="cpu", weights_only=False)
        key = tuple(state["key"]) if state["key"] is not None else None
        return cls(key=key, micro_batches=state["micro_batches"])


class SaveRoundBufferCallback(TrainerCallback):
    """Writes the trainer's current :class:`RoundBuffer` into every checkpoint folder.

    ``on_save`` runs on every process right after the Trainer wrote ``checkpoint-<global_step>``.
    """

    def __init__(self, get_buffer: Any, rank: int) -> None:
        self.get_buffer = get_buffer
        self.rank = rank

    def on_save(self, args, state, control, **kwargs):  # noqa: ANN001 - TrainerCallback signature
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        if os.path.isdir(folder):
            self.get_buffer().save(folder, self.rank)
        return control
