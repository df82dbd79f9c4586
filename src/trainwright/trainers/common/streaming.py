"""What both reference trainers need to train on a streamed (``IterableDataset``) dataset.

A stream has no length and cannot be indexed. The Trainer runs it as one epoch of ``max_steps`` and
resumes it by skipping the batches already trained (``skip_first_batches``) from the stream's start. A
finite stream that ends and restarts during the first run would break that count (the resumed run
would skip past the end and start the data over), so training reads it through :class:`RepeatedStream`:
one endless iterable whose pass ``p`` is the source read again (shuffled with ``seed`` and
``set_epoch(p)`` when asked). With a deterministic source the resumed run sees exactly the rows the
uninterrupted one saw, across passes too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import datasets
import torch

logger = logging.getLogger(__name__)


def is_streamed(dataset: Any) -> bool:
    """True for a dataset read by iteration only (``datasets.IterableDataset``, a torch ``IterableDataset``)."""
    return isinstance(dataset, (torch.utils.data.IterableDataset, datasets.IterableDataset))


def uses_streaming(*datasets_: Any) -> bool:
    """Whether any of the datasets (or of the values of a dict of datasets) is streamed."""
    for dataset in datasets_:
        parts = dataset.values() if isinstance(dataset, dict) else [dataset]
        if any(is_streamed(part) for part in parts):
            return True
    return False


def read_stream_with_one_worker(args: Any, reason: str) -> None:
    """Set ``dataloader_num_workers`` to 0 for a streamed training set, with a warning naming ``reason``,
    when it was set: every worker would read the whole stream."""
    if args.dataloader_num_workers != 0:
        logger.warning(
            "Iterable datasets require `dataloader_num_workers=0` %s; overriding dataloader_num_workers=%d with 0",
            reason,
            args.dataloader_num_workers,
        )
        args.dataloader_num_workers = 0


def pass_rows(source: Any, epoch: int, shuffle: bool = False, seed: int = 0) -> Iterator[Any]:
    """The rows of pass ``epoch`` over ``source``, shuffled with ``seed`` and ``epoch`` when asked (and the
    source can: a ``datasets.IterableDataset`` shuffles within a buffer, as TRL's streaming does)."""
    if shuffle and hasattr(source, "shuffle") and hasattr(source, "set_epoch"):
        source = source.shuffle(seed=seed)
        source.set_epoch(epoch)
    return iter(source)


class RepeatedStream(torch.utils.data.IterableDataset):
    """``source`` read pass after pass, endlessly (module docstring); a pass with no row is an error,
    not an endless loop."""

    def __init__(self, source: Any, name: str = "train", shuffle: bool = False, seed: int = 0) -> None:
        self.source = source
        self.name = name
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[Any]:
        epoch = 0
        while True:
            rows = 0
            for row in pass_rows(self.source, epoch, self.shuffle, self.seed):
                rows += 1
                yield row
            if rows == 0:
                raise ValueError(f"the streamed {self.name} dataset yielded no rows (after filtering)")
            epoch += 1
