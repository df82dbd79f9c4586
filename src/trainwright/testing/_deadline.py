"""A deadline per program inside the oracle's child (``_runner``), and the processes a program left behind.

The parent gives a child the sum of its programs' ``timeout_s``, so one program that never returns held the
whole chunk for hours: a project whose trainer tokenises with ``dataset.map(num_proc=4)`` in ``__init__``
forks worker processes after torch started its threads, and they deadlock (the blind test split's
``ZHZisZZ/modpo``, 2026-12-07). Each program now gets its own ``timeout_s`` (``SIGALRM``); when it runs out,
the processes it started are killed, the program's record says so, and the child stops, so the parent runs
the programs after it in a fresh child, as it does after a program that taints the libraries.

The processes are killed before the exception is raised, not after: raised first, it unwound through the
library's own clean-up (``multiprocess``'s pool ``__exit__``), which waited on the deadlocked workers in turn.
Where a clean-up still blocks, a second alarm ``GRACE_S`` later calls ``stuck`` (the runner writes the records
it has, this program's as timed out, and ends the child). A child that stopped at a deadline ends its whole
process group (``end_group``): processes a clean-up forked after the deadline outlived it and held the pipes
its parent reads.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

GRACE_S = 10  # how long the clean-up after a deadline may take before the child ends itself


class ProgramTimedOut(BaseException):
    """Raised in the child's main thread when a program's ``timeout_s`` runs out. A ``BaseException``,
    so that a project's ``except Exception:`` does not swallow it and run on."""


@contextlib.contextmanager
def deadline(seconds: float, stuck: Callable[[str], None]) -> Iterator[None]:
    """Raise ``ProgramTimedOut`` in the block after ``seconds`` (whole seconds, at least one), once the
    processes the program started are killed; call ``stuck`` with the reason if the block has still not
    left ``GRACE_S`` later. Where the platform has no ``SIGALRM`` the parent's timeout for the whole
    child still holds."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return
    reason = f"timed out after {seconds:.0f} s"

    def give_up(signum: int, frame: object) -> None:
        stuck(reason)

    def expire(signum: int, frame: object) -> None:
        kill_children()
        signal.signal(signal.SIGALRM, give_up)
        signal.alarm(GRACE_S)
        raise ProgramTimedOut(reason)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(max(1, round(seconds)))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def end_group() -> None:
    """Kill every process of this one's process group, this one with them: what a timed-out program
    started, including processes its clean-up forked after the deadline and that outlive their parent
    (a pool's replacement workers, re-parented to init), which would hold the pipes the parent reads.
    The oracle starts each child as a group of its own (``start_new_session``); a process that leads
    no group kills only its children and exits."""
    if hasattr(os, "killpg") and os.getpgid(0) == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    kill_children()
    os._exit(0)


def kill_children() -> None:
    """Kill the processes this one started that are still running (read from ``/proc``: Linux; elsewhere
    nothing), so that none holds the pipes the parent reads."""
    me = str(os.getpid())
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError):
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if fields.get("PPid", "").strip() == me:
                os.kill(int(status.parent.name), signal.SIGKILL)
