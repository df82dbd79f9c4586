"""One forked child does a whole run; the parent only enforces the per-file time limit.

Why: with one job, a pool worker (``workers.Pool``) costs a round trip per file and pickles every
file's summary back to the parent, which then builds the project model a second time. On TRL's
source that was a fifth of the run's CPU. Here the child runs the same in-process code the
``--file-timeout 0`` path runs, and only tells the parent which file it starts (``beat``) — a few
bytes on a pipe. The parent sleeps in ``select`` with a deadline.

When a file runs past the limit (or the child dies on it), the parent kills the child and forks a
fresh one that runs everything again, skipping that file: ``skipped`` maps the beat's key to why, and
the run reports the file as ``TW000``. Each restart adds one file to ``skipped``, so a run restarts
at most once per file; a slow file is rare, and paying a rerun for it keeps the common case cheap.
Like the pool, this uses no signal handler in-process: library use and flake8 are unaffected.

A host that ignores ``SIGCHLD`` (``SIG_IGN`` survives ``exec``: some daemons and CI runners start their
jobs that way) makes the kernel reap our children itself, so ``waitpid`` has no status to give and
fails with ``ECHILD``. Nothing here depends on that status: the outcome travels on the pipe (result,
error, or end of file), and ``waitpid`` only reaps. So ``ECHILD`` means "already gone", and the child
is killed through a pidfd where there is one, which can never reach another process that got the
recycled pid of a child the kernel reaped early. The process-wide setting is left as the host chose.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

Beat = Callable[[str | None], None]  # the key of the file now started, or None between files
Work = Callable[[Beat, Mapping[str, str]], Any]

_BEAT, _RESULT, _ERROR = b"B", b"R", b"E"
_HEADER = 5  # one kind byte, then a 4-byte big-endian payload length


class WorkerError(RuntimeError):
    """The child raised (the message carries its traceback) or died between files."""


def available() -> bool:
    """A child that starts with the parent's imports and settings needs ``fork`` (POSIX)."""
    return hasattr(os, "fork")


def run(work: Work, timeout: float, describe_timeout: Callable[[float], str]) -> Any:
    """``work(beat, skipped)`` in a forked child; its return value (pickled back) is ours.

    ``beat(key)`` before each file starts its deadline of ``timeout`` seconds; ``beat(None)`` means
    the child is between files (no deadline: the parent's own steps had none in the pool either).
    A key that timed out is skipped with ``describe_timeout(timeout)``; one the child died on with
    "internal error (...)".
    """
    skipped: dict[str, str] = {}
    while True:
        done, value = _one_child(work, timeout, skipped, describe_timeout)
        if done:
            return value


def _one_child(
    work: Work, timeout: float, skipped: dict[str, str], describe_timeout: Callable[[float], str]
) -> tuple[bool, Any]:
    read_fd, write_fd = os.pipe()
    _flush()  # else the child would print the parent's buffered output again
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child; its effects are tested through the parent
        os.close(read_fd)
        _child(work, write_fd, skipped)
    os.close(write_fd)
    child = _Child(pid)
    try:
        return _watch(child, read_fd, timeout, skipped, describe_timeout)
    finally:
        os.close(read_fd)
        child.end(kill=True)


def _child(work: Work, fd: int, skipped: Mapping[str, str]) -> None:  # pragma: no cover - child
    code = 0
    try:
        value = work(lambda key: _send(fd, _BEAT, (key or "").encode("utf-8", "surrogateescape")), skipped)
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        _flush()  # before the result: the parent may stop this process once it has it
        _send(fd, _RESULT, payload)
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # noqa: BLE001 - the parent raises it as WorkerError
        import traceback  # only on this path: its import costs more than a small lint

        code = 1
        try:
            _flush()
            _send(fd, _ERROR, traceback.format_exc().encode("utf-8", "replace"))
        except OSError:
            pass
    finally:
        os._exit(code)  # never the parent's atexit handlers, never a second teardown of its state


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


class _Child:
    """A forked child's pid, reaped exactly once (a reaped pid may belong to another process)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.ended: str | None = None
        self.pidfd = _pidfd(pid)

    def end(self, kill: bool) -> str:
        """Wait for the child (killing it first if asked); how it ended, in words."""
        if self.ended is None:
            try:
                if kill:
                    self._kill()
                _, status = os.waitpid(self.pid, 0)
                if os.WIFSIGNALED(status):
                    self.ended = f"killed by signal {os.WTERMSIG(status)}"
                else:
                    self.ended = f"exit status {os.WEXITSTATUS(status)}"
            except ChildProcessError:  # SIGCHLD ignored: the kernel reaped it, and kept no status
                self.ended = "ended; its exit status is unknown because this process ignores SIGCHLD"
            finally:
                if self.pidfd is not None:
                    os.close(self.pidfd)
                    self.pidfd = None
        return self.ended

    def _kill(self) -> None:
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            elif _alive(self.pid):  # without a pidfd: only a child not reaped yet (SIGCHLD ignored)
                os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _pidfd(pid: int) -> int | None:
    """A descriptor that names this very process (Linux 5.3+), or None where there is none."""
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:  # an older kernel (ENOSYS), or the child is already gone (ESRCH)
        return None


def _alive(pid: int) -> bool:
    """Whether our child ``pid`` has not been reaped (it may have exited: a zombie is still ours)."""
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def _send(fd: int, kind: bytes, payload: bytes) -> None:
    data = memoryview(kind + len(payload).to_bytes(4, "big") + payload)
    while data:
        data = data[os.write(fd, data) :]


def _watch(
    child: _Child, fd: int, timeout: float, skipped: dict[str, str], describe_timeout: Callable[[float], str]
) -> tuple[bool, Any]:
    buffer = bytearray()
    current: str | None = None
    deadline = float("inf")
    while True:
        wait = None if deadline == float("inf") else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            if current is not None and time.monotonic() >= deadline:
                skipped[current] = describe_timeout(timeout)
                return False, None
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            how = child.end(kill=False)
            if current is not None:
                skipped[current] = f"internal error (the worker process died: {how})"
                return False, None
            raise WorkerError(f"the lint worker process died between files ({how})")
        buffer += chunk
        while len(buffer) >= _HEADER:
            size = int.from_bytes(buffer[1:_HEADER], "big")
            if len(buffer) < _HEADER + size:
                break
            kind, payload = bytes(buffer[:1]), bytes(buffer[_HEADER : _HEADER + size])
            del buffer[: _HEADER + size]
            if kind == _BEAT:
                current = payload.decode("utf-8", "surrogateescape") or None
                deadline = time.monotonic() + timeout if current is not None else float("inf")
            elif kind == _RESULT:
                child.end(kill=False)  # it exits once the result is sent
                return True, pickle.loads(payload)
            else:
                raise WorkerError("the lint worker failed:\n" + payload.decode("utf-8", "replace"))
