"""A virtual clock that advances only by the delays the oracle injects.

Why: a timer moved from an override into a callback must still measure the same span (one
micro-batch's forward, the whole optimiser step, an evaluation). Real sleeps make that slow and noisy
on a loaded CI machine; a virtual clock makes every timer read an exact sum of known delays, so a timer
that moved to another span reads another number, deterministically. Each read also advances the clock
by one nanosecond so that nothing divides by a zero duration.

Installed in the child process before the user's module (or transformers) is imported, so that
``from time import perf_counter`` binds the virtual one too.
"""

from __future__ import annotations

import time

# The delays, in seconds, chosen so that sums of them identify a span: training forward, the
# optimiser step, an evaluation forward (one batch).
FORWARD_S = 0.1
OPTIMIZER_S = 0.3
EVAL_FORWARD_S = 0.7
_TICK_S = 1e-9


class VirtualClock:
    """Monotonic seconds advanced by :meth:`advance` (and by one tick per read)."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def read(self) -> float:
        self.now += _TICK_S
        return self.now

    def read_ns(self) -> int:
        return int(self.read() * 1e9)


def install(clock: VirtualClock) -> None:
    """Replace the ``time`` module's clocks (``time``, ``perf_counter``, ``monotonic``, ``process_time``
    and their ``_ns`` forms) with ``clock``."""
    for name in ("time", "perf_counter", "monotonic", "process_time"):
        setattr(time, name, clock.read)
        setattr(time, f"{name}_ns", clock.read_ns)
