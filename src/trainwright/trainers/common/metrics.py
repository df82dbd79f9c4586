"""Metrics accumulated between two ``log`` calls, shared by the reference trainers.

Why a window: ``compute_loss`` runs once per micro-batch, but ``Trainer.log`` runs every
``logging_steps`` optimiser steps. Reporting only the last micro-batch's reward (as naive subclasses
do) is noisy and wrong under gradient accumulation; we keep running sums and report the mean over
the whole logging window, in the key names TRL uses so dashboards carry over. Values must already be
reduced across processes (``accelerator.gather``) when added, so every rank logs the same number.
"""

from __future__ import annotations

from collections import defaultdict


class MetricsWindow:
    """Running means of named scalars, kept separately for training and evaluation."""

    def __init__(self) -> None:
        self._sums: dict[str, defaultdict[str, float]] = {
            "train": defaultdict(float),
            "eval": defaultdict(float),
        }
        self._counts: dict[str, defaultdict[str, float]] = {
            "train": defaultdict(float),
            "eval": defaultdict(float),
        }

    def add(self, mode: str, name: str, value: float, weight: float = 1.0) -> None:
        """Add ``value`` (a mean over ``weight`` items) to the window of ``mode`` ("train" or "eval")."""
        self._sums[mode][name] += float(value) * weight
        self._counts[mode][name] += weight

    def set(self, mode: str, name: str, value: float) -> None:
        """Make ``value`` the window's value of ``name``, replacing what was added (a running total such as
        a token count is reported as its latest value, not averaged)."""
        self._sums[mode][name] = float(value)
        self._counts[mode][name] = 1.0

    def has(self, mode: str, name: str) -> bool:
        """Whether the window of ``mode`` holds a value of ``name`` (something was added since the last log)."""
        return self._counts[mode].get(name, 0.0) > 0

    def pop_means(self, mode: str) -> dict[str, float]:
        """Return the weighted mean of every metric in the window of ``mode`` and empty that window."""
        sums, counts = self._sums[mode], self._counts[mode]
        means = {name: sums[name] / counts[name] for name in sums if counts[name] > 0}
        sums.clear()
        counts.clear()
        return means

    def merge_into(self, logs: dict[str, float]) -> None:
        """Add the window's means to a ``Trainer.log`` payload, **in place**.

        In place because ``Trainer.evaluate`` returns the very dict it passed to ``log``: a merge into a
        copy reaches the log history but not ``evaluate()``'s return value. An evaluation payload is
        recognised by its ``eval_``-prefixed keys (what ``Trainer.evaluate`` passes to ``log``); its
        metrics get the same prefix, so ``rewards/accuracies`` from evaluation reads
        ``eval_rewards/accuracies``.
        """
        if any(key.startswith("eval_") for key in logs):
            logs.update({f"eval_{name}": value for name, value in self.pop_means("eval").items()})
        else:
            logs.update(self.pop_means("train"))
