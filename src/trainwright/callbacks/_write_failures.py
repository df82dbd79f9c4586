"""One streak of failed appends to a log file: warn once, count the rest, say what is missing.

Why shared: every log writer (the metrics JSONL, the GRPO completions table) must degrade the same way
on I/O errors (a full disk, a vanished mount, a file-size limit): warn once, keep training, never lose
the run. Only the wording of the first warning is the writer's own; the counting is here.
"""

from __future__ import annotations

import warnings
from pathlib import Path


class WriteFailures:
    """The records one writer could not append, grouped in failure streaks.

    ``unit`` names one record ("log line", "completion row"). :meth:`failed` warns at the first failure
    of a streak (the caller words it) and only counts the later ones; :meth:`succeeded` closes the
    streak with one warning saying which records are missing; :meth:`finish` does the same at the end
    of training when the writes never worked again. ``total`` counts every lost record of the run.
    """

    def __init__(self, owner: str, unit: str) -> None:
        self.owner = owner
        self.unit = unit
        self.steps: list[tuple[int, int]] = []  # (step, records lost there) in the current streak
        self.total = 0

    @property
    def in_streak(self) -> bool:
        return bool(self.steps)

    def failed(self, step: int, count: int, first_warning: str) -> None:
        """Count ``count`` records of ``step`` as lost; warn with ``first_warning`` if a streak starts."""
        if not self.steps:
            warnings.warn(f"{self.owner}: {first_warning}", stacklevel=3)
        self.steps.append((step, count))
        self.total += count

    def succeeded(self, step: int, path: str | Path) -> None:
        """A write worked: close the current streak (one warning naming what is missing)."""
        if self.steps:
            warnings.warn(
                f"{self.owner}: writing to {path} works again at step {step}; {self.describe()} "
                "are missing from the file",
                stacklevel=3,
            )
            self.steps = []

    def finish(self, path: str | Path) -> None:
        """End of training: report a streak that never ended."""
        if self.steps:
            warnings.warn(
                f"{self.owner}: {self.describe()} could not be written to {path}: the writes kept failing "
                "until the end of training",
                stacklevel=3,
            )
            self.steps = []

    def describe(self) -> str:
        """``"3 log lines (steps 1-2)"``: how many records of the current streak, from which steps."""
        count = sum(n for _, n in self.steps)
        first, last = self.steps[0][0], self.steps[-1][0]
        span = f"step {first}" if first == last else f"steps {first}-{last}"
        return f"{count} {self.unit}{'s' if count != 1 else ''} ({span})"
