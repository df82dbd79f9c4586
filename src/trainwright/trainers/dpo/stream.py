"""DPO on streamed (``IterableDataset``) preference data: what the trainer checks and sets up, as TRL.

Rows are tokenised lazily as they are read (:func:`~trainwright.trainers.dpo.data.prepare_preference_dataset`);
training reads the stream through :class:`~trainwright.trainers.common.streaming.RepeatedStream`, so
``max_steps`` (which the Trainer needs without a length) may outrun one pass and a resume skips exactly
the batches already trained. Evaluation reads a stream once, to its end.
"""

from __future__ import annotations

import logging
from typing import Any

from trainwright.trainers.common.streaming import is_streamed, read_stream_with_one_worker, uses_streaming

logger = logging.getLogger(__name__)

PRECOMPUTE_ON_STREAM = (
    "precompute_ref_log_probs=True is not supported with IterableDataset: the reference log-probs are stored "
    "as a column of the dataset, which needs random access. Use a map-style datasets.Dataset (e.g. "
    "Dataset.from_generator) or set precompute_ref_log_probs=False"
)


def check_stream_settings(args: Any, train_dataset: Any, eval_dataset: Any = None) -> None:
    """Refuse precompute on a stream; read streams with ``dispatch_batches=False`` (forced, with a warning
    when it was set ``True``, as TRL), so every process reads the stream and takes its own batches instead of
    the main process concatenating everyone's. A streamed training set is read by one loader worker:
    ``dataloader_num_workers`` workers would each read the whole stream and repeat every row."""
    if not uses_streaming(train_dataset, eval_dataset):
        return
    if args.precompute_ref_log_probs:
        raise ValueError(PRECOMPUTE_ON_STREAM)
    if args.accelerator_config.dispatch_batches is True:
        logger.warning(
            "An IterableDataset is read with dispatch_batches=False; dispatch_batches=True in accelerator_config "
            "is overridden. Unset it (or set it to False) to remove this warning."
        )
    args.accelerator_config.dispatch_batches = False
    if is_streamed(train_dataset):
        read_stream_with_one_worker(
            args, "(each loader worker would read the whole stream, repeating its rows)"
        )
