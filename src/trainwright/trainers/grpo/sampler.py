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

The loader looks each item's row up in the dataset (:class:`RoundRows`) and hands the Trainer a
:class:`RoundBatch`: the round's rows, tagged with the epoch, round and slot. A streamed dataset has
no indices to sample; :mod:`trainwright.trainers.grpo.stream` yields the same items from the stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import torch
from torch.utils.data import Sampler

T = TypeVar("T")


class RoundItem(NamedTuple):
    """One completion slot: which epoch, round and micro-step it belongs to, and its prompt."""

    epoch: int
    round: int
    slot: int
    prompt_index: int  # -1 for a row of a streamed dataset (it has no index)


@dataclass(frozen=True)
class RoundLayout:
    """How a generation round is laid out, shared by the map-style sampler and the stream.

    ``prompts_per_round`` is the number of distinct prompts one round uses over all processes,
    i.e. ``per_device_train_batch_size × processes × steps_per_generation / num_generations``;
    ``micro_steps_per_round`` is ``steps_per_generation × num_iterations``.
    """

    num_generations: int
    prompts_per_round: int
    micro_steps_per_round: int
    shuffle: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.num_generations < 1 or self.prompts_per_round < 1 or self.micro_steps_per_round < 1:
            raise ValueError(
                f"num_generations ({self.num_generations}), prompts_per_round ({self.prompts_per_round}) and "
                f"micro_steps_per_round ({self.micro_steps_per_round}) must all be >= 1"
            )

    def too_few_prompts(self, count: int, what: str) -> ValueError:
        """The error for a training set with fewer prompts than one round needs."""
        return ValueError(
            f"{what} has {count} prompts but one generation round needs {self.prompts_per_round} "
            f"(per_device_train_batch_size x processes x steps_per_generation / num_generations); add prompts "
            f"or lower those settings"
        )

    def round_items(
        self, epoch: int, round_index: int, prompts: Sequence[T]
    ) -> Iterator[tuple[RoundItem, T]]:
        """The round's ``(RoundItem, prompt)`` pairs: every micro-step (slot) sees every prompt G times in a
        row; ``prompts`` are dataset indices (``RoundItem.prompt_index``) or rows (index -1)."""
        for slot in range(self.micro_steps_per_round):
            for prompt in prompts:
                item = RoundItem(epoch, round_index, slot, prompt if isinstance(prompt, int) else -1)
                for _ in range(self.num_generations):
                    yield item, prompt


class GroupedRoundSampler(Sampler[RoundItem]):
    """Yield every generation round's prompt indices (each × G) once per micro-step of the round."""

    def __init__(self, num_prompts: int, layout: RoundLayout) -> None:
        if num_prompts < layout.prompts_per_round:
            raise layout.too_few_prompts(num_prompts, "the training dataset")
        self.num_prompts = num_prompts
        self.layout = layout
        self.epoch = 0

    @property
    def rounds_per_epoch(self) -> int:
        return self.num_prompts // self.layout.prompts_per_round

    def set_epoch(self, epoch: int) -> None:
        """Called by ``Trainer`` at the start of every epoch: selects that epoch's permutation."""
        self.epoch = epoch

    def prompt_order(self, epoch: int | None = None) -> list[int]:
        """The epoch's prompt order (before grouping); the same on every process."""
        epoch = self.epoch if epoch is None else epoch
        if not self.layout.shuffle:
            return list(range(self.num_prompts))
        generator = torch.Generator().manual_seed(self.layout.seed + epoch)
        return torch.randperm(self.num_prompts, generator=generator).tolist()

    def round_prompts(self, epoch: int, round_index: int) -> list[int]:
        """The distinct prompt indices of one round (in order)."""
        start = round_index * self.layout.prompts_per_round
        return self.prompt_order(epoch)[start : start + self.layout.prompts_per_round]

    def refill_prompts(self, epoch: int, round_index: int, positions: list[int]) -> list[int]:
        """The prompts at ``positions`` (0 = first prompt after the round) in the epoch order, wrapping.

        Dynamic sampling draws replacement groups from here; the trainer interleaves positions by
        process so that processes refill from different prompts.
        """
        order = self.prompt_order(epoch)
        start = (round_index + 1) * self.layout.prompts_per_round
        return [order[(start + position) % self.num_prompts] for position in positions]

    def __iter__(self) -> Iterator[RoundItem]:
        epoch, size = self.epoch, self.layout.prompts_per_round
        order = self.prompt_order(epoch)
        for round_index in range(self.rounds_per_epoch):
            prompts = order[round_index * size : (round_index + 1) * size]
            for item, _ in self.layout.round_items(epoch, round_index, prompts):
                yield item

    def __len__(self) -> int:
        layout = self.layout
        return (
            self.rounds_per_epoch
            * layout.prompts_per_round
            * layout.num_generations
            * layout.micro_steps_per_round
        )


class RoundBatch(list):
    """One micro-step's batch: the dataset rows of the round (a plain ``list`` of row dicts, G copies of each
    prompt in a row) plus where it belongs: ``epoch``, ``round`` and ``slot`` (see the module docstring),
    and the rows' dataset indices (``None`` for a streamed dataset).

    It compares equal to the list of its rows, as TRL's generation batch does. ``to`` returns the batch
    itself: accelerate moves a batch with a ``to`` method that way, and rows hold no tensors, whereas
    rebuilding the list (its route for a plain list) would drop the attributes.
    """

    def __init__(
        self,
        rows: Iterable[dict[str, Any]] = (),
        epoch: int = 0,
        round: int = 0,
        slot: int = 0,
        prompt_indices: list[int] | None = None,
    ) -> None:
        super().__init__(rows)
        self.epoch = epoch
        self.round = round
        self.slot = slot
        self.prompt_indices = prompt_indices

    @property
    def key(self) -> tuple[int, int]:
        """The round this batch belongs to: ``(epoch, round)``."""
        return (self.epoch, self.round)

    def to(self, *args: Any, **kwargs: Any) -> RoundBatch:
        return self


class RoundRows(torch.utils.data.Dataset):
    """``dataset[item]`` for a :class:`RoundItem`: the item with its prompt's row of the training set.

    The sampler yields items, so each micro-step's batch is looked up here (in the DataLoader's workers
    when ``dataloader_num_workers > 0``), not copied once per micro-step up front.
    """

    def __init__(self, dataset: Any, length: int) -> None:
        self.dataset = dataset
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, item: RoundItem) -> tuple[RoundItem, dict[str, Any]]:
        return item, self.dataset[item.prompt_index]


def collate_round(items: list[tuple[RoundItem, dict[str, Any]]]) -> RoundBatch:
    """Turn a micro-step's ``(RoundItem, row)`` pairs into a :class:`RoundBatch` (checking it is one slot of
    one round: the loader's batch size must be ``per_device_train_batch_size × steps_per_generation``)."""
    keys = {(item.epoch, item.round, item.slot) for item, _ in items}
    if len(keys) != 1:
        raise RuntimeError(
            f"a dataloader batch mixes rounds/slots {sorted(keys)}: the batch size must be "
            f"per_device_train_batch_size x steps_per_generation"
        )
    first = items[0][0]
    indices = [item.prompt_index for item, _ in items]
    return RoundBatch(
        (row for _, row in items),
        epoch=first.epoch,
        round=first.round,
        slot=first.slot,
        prompt_indices=None if min(indices) < 0 else indices,
    )
