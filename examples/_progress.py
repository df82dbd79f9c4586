"""A progress bar for the examples that leaves the printing of metrics to the example itself."""

from __future__ import annotations

import sys

from transformers import ProgressCallback, Trainer


class BarOnlyProgress(ProgressCallback):
    """transformers' tqdm bar without its printout of every raw log dict."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        return None


def add_progress_bar(trainer: Trainer) -> None:
    """Show a progress bar when a person is watching (stderr is a terminal); stay quiet in logs and CI."""
    if sys.stderr.isatty():
        trainer.add_callback(BarOnlyProgress())
