"""The prompt sampler behind ``GRPOTrainer.get_train_dataloader``.

Why a custom sampler: ``Trainer`` counts optimiser steps and epochs from the length of the training
dataloader, one batch per micro-step. GRPO, however, consumes prompts one *generation round* at a
time: a round's prompts are generated for at once and then feed ``steps_per_generation`` micro-steps,
``num_iterations`` times over. So the sampler yields each round's items once per micro-step of that
round; the Trainer then counts exactly the micro-steps that will run, and ``skip_first_batches`` on
resume lands on the right micro-step of the right round.

Every yielded item is a :class:`RoundItem` ``(epoch, round, slot, prompt_index)``:

* ``slot`` is the micro-step's position inside the round (``0 .. steps_per_generation·μ - 1``); the
  trainer generates at slot 0 and serves its buffer at the other slots, so it never has to count
  micro-steps itself (which would go wrong after a resume);
* each prompt index appears ``num_generations`` times in a row, so a group never straddles two rounds;
* the order is a permutation drawn from a local generator seeded with ``seed + epoch``: identical on
  every process (each process takes its own contiguous slice of a round through accelerate's batch
  sharding) and reproducible after a resume, without touching the global RNG.

A trailing partial round (fewer prompts left than one round needs) is dropped, as TRL does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import torch
from torch.utils.data import Sampler


class RoundItem(NamedTuple):
    """One completion slot: which epoch, round and micro-step it belongs to, and its prompt."""

    epoch: int
    round: int
    slot: int
    prompt_index: int


class GroupedRoundSampler(Sampler[RoundItem]):
    """Yield every generation round's prompt indices (each × G) once per micro-step of the round.

    ``prompts_per_round`` is the number of distinct prompts one round uses over all processes,
    i.e. ``per_device_train_batch_size × processes × steps_per_generation / num_generations``.
    ``micro_steps_per_round`` is ``steps_per_generation × num_iterations``.
    """

    def __init__(
        self,
        num_prompts: int,
        *,
        num_generations: int,
        prompts_per_round: int,
        micro_steps_per_round: int,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        if num_generations < 1 or prompts_per_round < 1 or micro_steps_per_round < 1:
            raise ValueError(
                f"num_generations ({num_generations}), prompts_per_round ({prompts_per_round}) and "
                f"micro_steps_per_round ({micro_steps_per_round}) must all be >= 1"
            )
        if num_prompts < prompts_per_round:
            raise ValueError(
                f"the training dataset has {num_prompts} prompts but one generation round needs "
                f"{prompts_per_round} (per_device_train_batch_size x processes x steps_per_generation / "
                f"num_generations); add prompts or lower those settings"
            )
        self.num_prompts = num_prompts
        self.num_generations = num_generations
        self.prompts_per_round = prompts_per_round
        self.micro_steps_per_round = micro_steps_per_round
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0

    @property
    def rounds_per_epoch(self) -> int:
        return self.num_prompts // self.prompts_per_round

    def set_epoch(self, epoch: int) -> None:
        """Called by ``Trainer`` at the start of every epoch: selects that epoch's permutation."""
        self.epoch = epoch

    def prompt_order(self, epoch: int | None = None) -> list[int]:
        """The epoch's prompt order (before grouping); the same on every process."""
        epoch = self.epoch if epoch is None else epoch
        if not self.shuffle:
            return list(range(self.num_prompts))
        generator = torch.Generator().manual_seed(self.seed + epoch)
        return torch.randperm(self.num_prompts, generator=generator).tolist()

    def round_prompts(self, epoch: int, round_index: int) -> list[int]:
        """The distinct prompt indices of one round (in order)."""
        start = round_index * self.prompts_per_round
        return self.prompt_order(epoch)[start : start + self.prompts_per_round]

    def refill_prompts(self, epoch: int, round_index: int, positions: list[int]) -> list[int]:
        """The prompts at ``positions`` (0 = first prompt after the round) in the epoch order, wrapping.

        Dynamic sampling draws replacement groups from here; the trainer interleaves positions by
        process so that processes refill from different prompts.
        """
        order = self.prompt_order(epoch)
        start = (round_index + 1) * self.prompts_per_round
        return [order[(start + position) % self.num_prompts] for position in positions]

    def __iter__(self) -> Iterator[RoundItem]:
        epoch = self.epoch
        order = self.prompt_order(epoch)
        for round_index in range(self.rounds_per_epoch):
            prompts = order[round_index * self.prompts_per_round : (round_index + 1) * self.prompts_per_round]
            grouped = [index for index in prompts for _ in range(self.num_generations)]
            for slot in range(self.micro_steps_per_round):
                for index in grouped:
                    yield RoundItem(epoch, round_index, slot, index)

    def __len__(self) -> int:
        return (
            self.rounds_per_epoch * self.prompts_per_round * self.num_generations * self.micro_steps_per_round
        )


class RoundItemDataset(torch.utils.data.Dataset):
    """A pass-through dataset: ``dataset[item]`` is the ``RoundItem`` itself.

    The dataloader carries only indices; the trainer looks the prompts up in the real dataset when
    it generates, so the rows are not copied once per micro-step.
    """

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, item: RoundItem) -> RoundItem:
        return item


def collate_round_items(items: list[RoundItem]) -> dict[str, torch.Tensor]:
    """Turn a micro-step's ``RoundItem`` list into tensors (which accelerate can move and shard)."""
    epochs = {item.epoch for item in items}
    rounds = {item.round for item in items}
    slots = {item.slot for item in items}
    if len(epochs) != 1 or len(rounds) != 1 or len(slots) != 1:
        raise RuntimeError(
            f"a dataloader batch mixes rounds/slots (epochs {sorted(epochs)}, rounds {sorted(rounds)}, "
            f"slots {sorted(slots)}): the batch size must be "
            f"per_device_train_batch_size x steps_per_generation"
        )
    return {
        "epoch": torch.tensor(items[0].epoch),
        "round": torch.tensor(items[0].round),
        "slot": torch.tensor(items[0].slot),
        "prompt_index": torch.tensor([item.prompt_index for item in items], dtype=torch.long),
    }
