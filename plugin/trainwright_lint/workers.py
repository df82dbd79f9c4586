"""Worker processes for the CLI: each parses its share of the files once and keeps the trees, so
the second pass (the rules) runs where the trees already are, and a parent that can stop any of
them.

Why our own pool and not ``ProcessPoolExecutor``: a task must go back to the worker that parsed the
file (the tree lives there; parsing twice is what made the old CLI slow), and one file that runs
past ``--file-timeout`` must cost that file only. The parent waits on every worker's pipe with a
deadline; a worker past it is killed, its file becomes a ``TW000``, and a fresh worker takes over
the rest of its files. Nothing in-process uses signals, so library use and flake8 are unaffected.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

Handler = Callable[[Any], Any]


@dataclass
class _Worker:
    process: Any
    conn: Connection
    busy: tuple[Any, float] | None = None  # (task, deadline)
    done: int = 0


@dataclass
class TaskResult:
    task: Any
    worker: int
    value: Any = None
    timed_out: bool = False
    crashed: str = ""


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _serve(conn: Connection, handler: Handler) -> None:
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            try:
                conn.send(("ok", handler(message)))
            except Exception as exc:  # noqa: BLE001 - the parent reports it on the file
                conn.send(("error", f"{exc.__class__.__name__}: {exc}"))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        conn.close()
        os._exit(0)


@dataclass
class Pool:
    """``size`` workers running ``handler`` on messages; ``timeout`` seconds per task (0: none)."""

    size: int
    handler: Handler
    timeout: float = 0.0
    workers: list[_Worker] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.workers = [self._start() for _ in range(max(1, self.size))]

    def _start(self) -> _Worker:
        ctx = _context()
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, self.handler), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def _replace(self, index: int) -> None:
        old = self.workers[index]
        try:
            old.process.kill()
            old.process.join(5)
        except (OSError, ValueError):
            pass
        old.conn.close()
        self.workers[index] = self._start()

    def broadcast(self, message: Any) -> None:
        """Send ``message`` to every worker and wait for each answer (shared state, e.g. the model)."""
        for w in self.workers:
            w.conn.send(message)
        for i, w in enumerate(self.workers):
            try:
                w.conn.recv()
            except EOFError:
                self._replace(i)
                self.workers[i].conn.send(message)
                self.workers[i].conn.recv()

    def run(
        self,
        tasks: Iterable[Any],
        affinity: Callable[[Any], int | None] | None = None,
        on_replace: Callable[[int], None] | None = None,
    ) -> list[TaskResult]:
        """Run every task; ``affinity(task)`` names the worker that must run it (None: any)."""
        queues: dict[int | None, list[Any]] = {}
        for task in tasks:
            target = affinity(task) if affinity is not None else None
            queues.setdefault(
                target if target is not None and target < len(self.workers) else None, []
            ).append(task)
        for q in queues.values():
            q.reverse()  # pop() from the end keeps the order
        run = _Run(self, queues, on_replace)
        for i in range(len(self.workers)):
            run.feed(i)
        while any(w.busy is not None for w in self.workers):
            busy = [w for w in self.workers if w.busy is not None]
            soonest = min(w.busy[1] for w in busy)  # type: ignore[index]
            wait_for = None if soonest == float("inf") else max(0.0, soonest - time.monotonic())
            ready = wait([w.conn for w in busy], timeout=wait_for)
            now = time.monotonic()
            for i, w in enumerate(self.workers):
                if w.busy is not None:
                    run.settle(i, w.conn in ready, now)
        return run.results

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        for w in self.workers:
            w.process.join(5)
            if w.process.is_alive():
                w.process.kill()
            w.conn.close()

    def __enter__(self) -> Pool:  # noqa: PYI034 - Pool is final; typing.Self needs 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Run:
    """One ``Pool.run`` in progress: the tasks left per worker (``None``: any worker) and the results."""

    pool: Pool
    queues: dict[int | None, list[Any]]
    on_replace: Callable[[int], None] | None
    results: list[TaskResult] = field(default_factory=list)

    def feed(self, index: int) -> None:
        """Send worker ``index`` its next task (its own first, else a shared one), with its deadline."""
        own = self.queues.get(index)
        shared = self.queues.get(None)
        task = own.pop() if own else shared.pop() if shared else None
        if task is None:
            return
        timeout = self.pool.timeout
        deadline = time.monotonic() + timeout if timeout > 0 else float("inf")
        self.pool.workers[index].busy = (task, deadline)
        self.pool.workers[index].conn.send(task)

    def settle(self, index: int, answered: bool, now: float) -> None:
        """Worker ``index`` answered (record it), died, or ran past its deadline (replace it); then feed it."""
        w = self.pool.workers[index]
        assert w.busy is not None
        task, deadline = w.busy
        if answered:
            try:
                status, value = w.conn.recv()
            except (EOFError, OSError):
                self.results.append(TaskResult(task, index, crashed="the worker process died"))
                self._replaced(index)
                return
            w.busy = None
            self.results.append(
                TaskResult(task, index, value=value)
                if status == "ok"
                else TaskResult(task, index, crashed=value)
            )
            self.feed(index)
        elif now >= deadline:
            self.results.append(TaskResult(task, index, timed_out=True))
            self._replaced(index)

    def _replaced(self, index: int) -> None:
        self.pool.workers[index].busy = None
        self.pool._replace(index)
        if self.on_replace is not None:
            self.on_replace(index)
        self.feed(index)
