"""A per-file time limit, so one pathological file cannot stall a CI run.

``SIGALRM`` interrupts the linting of one file with ``FileTimeout`` (checked between bytecodes, so a
long pure-Python loop stops on time; a single C call such as parsing a huge file finishes first, then
stops). Only available in the main thread on POSIX; elsewhere (threads, Windows) the limit is a no-op
and the run relies on the rest of the linter being linear in the file size.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SECONDS = 20.0


class FileTimeout(Exception):
    """Raised inside the code under ``time_limit`` when it runs past the limit."""


def _available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise ``FileTimeout`` from the body once it has run ``seconds``.

    The alarm can land inside C code that calls back into Python (``ast.parse`` building its result,
    a garbage-collector callback): the exception may then surface as a different error (``SystemError``)
    or be swallowed. So the alarm also sets a flag, and any exception, or a normal exit, after the
    alarm fired becomes ``FileTimeout``."""
    if not seconds or seconds <= 0 or not _available():
        yield
        return
    message = f"took longer than {seconds:g}s"
    fired = False

    def _raise(signum: int, frame: object) -> None:
        nonlocal fired
        fired = True
        raise FileTimeout(message)

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except FileTimeout:
        raise
    except BaseException as exc:
        if fired:
            raise FileTimeout(message) from exc
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if fired:
        raise FileTimeout(message)
