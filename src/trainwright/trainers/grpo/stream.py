"""Generation rounds from a streamed (``IterableDataset``) training set.

A stream cannot be indexed, so :class:`~trainwright.trainers.grpo.sampler.GroupedRoundSampler` cannot
order it; :class:`RoundStream` yields the same ``(RoundItem, row)`` pairs straight from the stream:
it reads ``prompts_per_round`` rows (over all processes), then yields the round once per micro-step,
each row ``num_generations`` times in a row. Each process takes its contiguous slice of every micro-step
through accelerate's ``IterableDatasetShard``, which needs ``dispatch_batches=False`` (the trainer sets
it, as TRL does; dispatching would concatenate the string columns on the main process).

Passes over the data are counted *inside* the stream, which never ends: pass ``p`` is the stream's
``epoch`` (a ``datasets.IterableDataset`` is shuffled with ``seed`` and ``set_epoch(p)``, TRL's
buffered shuffle), and a partial round at the end of a pass is dropped, as for a map-style dataset.
Why endless: the Trainer runs a stream as one epoch of ``max_steps`` and resumes it by skipping the
batches already trained (``skip_first_batches``). Batches hold only rows (generation happens in
``training_step``), so skipping is cheap, and since the stream restarts from its beginning, a
deterministic source gives the resumed run the very prompts the uninterrupted one saw, across passes too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import torch

from trainwright.trainers.common.streaming import (
    is_streamed,
    pass_rows,
    read_stream_with_one_worker,
    uses_streaming,
)
from trainwright.trainers.grpo.sampler import RoundItem, RoundLayout

logger = logging.getLogger(__name__)

NO_DISPATCH = (
    "Iterable datasets require `dispatch_batches=False`, but it is set to `True` in `accelerator_config`: a "
    "streamed dataset is read by every process, each taking its own slice of a round, while dispatching would "
    "read it on the main process and concatenate the string columns. Set accelerator_config="
    "{'dispatch_batches': False} (or leave it unset)"
)


def configure_for_streaming(args: Any, train_dataset: Any, eval_dataset: Any) -> None:
    """Adjust ``args`` for streamed datasets before the Trainer builds its accelerator, as TRL does.

    Any streamed dataset needs ``dispatch_batches=False`` (set when unset, refused when ``True``). A streamed
    *training* set is read by one worker: ``dataloader_num_workers`` workers would each read the stream,
    splitting and interleaving rounds. An evaluation stream gets one worker for its own loader only.
    """
    if not uses_streaming(train_dataset, eval_dataset):
        return
    if args.accelerator_config.dispatch_batches:
        raise ValueError(NO_DISPATCH)
    args.accelerator_config.dispatch_batches = False
    if is_streamed(train_dataset):
        read_stream_with_one_worker(args, "to keep each round's prompts together")


class RoundStream(torch.utils.data.IterableDataset):
    """The endless stream of ``(RoundItem, row)`` pairs of a streamed dataset (module docstring)."""

    def __init__(self, source: Any, layout: RoundLayout) -> None:
        self.source = source
        self.layout = layout

    def pass_rows(self, epoch: int) -> Iterator[dict[str, Any]]:
        """The rows of pass ``epoch`` over the source, shuffled with ``seed`` and ``epoch`` when asked."""
        return pass_rows(self.source, epoch, self.layout.shuffle, self.layout.seed)

    def __iter__(self) -> Iterator[tuple[RoundItem, dict[str, Any]]]:
        epoch, size = 0, self.layout.prompts_per_round
        while True:
            rounds = 0
            prompts: list[dict[str, Any]] = []
            for row in self.pass_rows(epoch):
                prompts.append(row)
                if len(prompts) == size:
                    yield from self.layout.round_items(epoch, rounds, prompts)
                    rounds, prompts = rounds + 1, []
            if rounds == 0:
                raise self.layout.too_few_prompts(len(prompts), "the streamed training dataset")
            epoch += 1
