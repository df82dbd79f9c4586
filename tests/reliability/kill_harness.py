"""Kill training processes with SIGKILL in the middle of checkpoint saves, then resume in a fresh process.

How (all real: real processes, real writes, real ``kill -9``, no mocks):

* A **zygote** process imports torch, transformers and trainwright once and then only forks. Each
  training process of a chain is a fresh ``fork`` of it — new pid, nothing of the killed process left,
  no training done in the zygote — so a trial costs a tiny training run, not ~5 s of imports.
* A **chain** of ``trials + 1`` processes shares one ``output_dir``. Each one resumes with
  ``newest_complete_checkpoint`` (the child script's business, see ``kill_child``), lets 1–2 saves
  finish, and on the next ``SAVING`` event the test sleeps a random 0–1.2× the measured save time
  (skewed towards the start of the save) and sends SIGKILL. The next process resumes from what that left. The last one trains one step and exits.
* The **oracle** comes from the events, not from the code under test: every save whose ``SAVED``
  event arrived (it is sent after every ``on_save`` writer) is complete, so the resume must come from
  the killed save's step if its ``SAVED`` arrived, and otherwise from that step or the previous save
  (the marker can be on disk a few microseconds before the event is sent).

To test another trainer, write its child script (same contract) and call :func:`run_kill_chain` with
it; ``preload`` names the extra modules the zygote should import once. ``on_kill`` looks at each torn
output directory before the next process starts (it must not change it); every trial also records
where a plain ``get_last_checkpoint`` resume would have gone (``Trial.unguarded``), for negative
controls; events of kinds the harness does not know are collected per process (``ChainReport.extra``).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"

DEFAULT_PRELOAD = (
    "torch",
    "transformers",
    "transformers.trainer",
    "safetensors.torch",
    "trainwright.callbacks",
    "trainwright.toy",
    "kill_child",
    # "?": optional, a child that needs it reports the import error itself
    "?trainwright.trainers",
    "?datasets",
    "?trainwright.trainers.dpo.trainer",
    "?trainwright.trainers.grpo.trainer",
)
#: the events :func:`run_kill_chain` acts on; any other kind is only collected (``ChainReport.extra``)
CHAIN_EVENTS = ("RESUMED", "BEGIN", "SAVING", "SAVED")

_ZYGOTE = r"""
import importlib, json, os, sys, traceback
sys.path[:0] = json.loads(os.environ["KILL_HARNESS_PATHS"])
import torch
torch.set_num_threads(1)
for name in json.loads(os.environ["KILL_HARNESS_PRELOAD"]):
    try:
        importlib.import_module(name.lstrip("?"))
    except Exception:
        if not name.startswith("?"):
            raise
import kill_child

def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

reply({"ready": True})
for line in sys.stdin:
    cmd = json.loads(line)
    op = cmd["op"]
    if op == "spawn":
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                log = os.open(cmd["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(log, 1)
                os.dup2(log, 2)
                kill_child.configure(cmd["events"], cmd["output_dir"], cmd["stop_after"])
                exec(compile(cmd["script"], "<child script>", "exec"), {"__name__": "__main__"})
                code = 0
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            except BaseException:
                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush(); sys.stderr.flush()
                finally:
                    os._exit(code)
        reply({"pid": pid})
    elif op == "wait":
        _, status = os.waitpid(cmd["pid"], 0)
        reply({"signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
               "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None})
    elif op == "poll":
        pid, status = os.waitpid(cmd["pid"], os.WNOHANG)
        reply({"running": pid == 0,
               "signal": os.WTERMSIG(status) if pid and os.WIFSIGNALED(status) else None,
               "code": os.WEXITSTATUS(status) if pid and os.WIFEXITED(status) else None})
    elif op == "exit":
        break
"""


class Zygote:
    """A pre-imported Python process that forks the chain's training processes on request."""

    def __init__(self, preload: Sequence[str] = DEFAULT_PRELOAD, timeout: float = 120.0) -> None:
        env = dict(os.environ)
        env.update(
            KILL_HARNESS_PATHS=json.dumps([str(HERE), str(SRC)]),
            KILL_HARNESS_PRELOAD=json.dumps(list(preload)),
            HF_HUB_OFFLINE="1",
            TOKENIZERS_PARALLELISM="false",
            OMP_NUM_THREADS="1",
            PYTHONWARNINGS="always::UserWarning",
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        self.children: set[int] = set()
        self._reply(timeout)

    def _reply(self, timeout: float = 60.0) -> dict:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"zygote did not answer within {timeout}s (exit code {self.process.poll()})")
        return json.loads(line)

    def _send(self, **cmd: object) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(cmd) + "\n")
        self.process.stdin.flush()
        return self._reply()

    def spawn(self, script: str, events: Path, output_dir: Path, log: Path, stop_after: int | None) -> int:
        pid = self._send(
            op="spawn",
            script=script,
            events=str(events),
            output_dir=str(output_dir),
            log=str(log),
            stop_after=stop_after,
        )["pid"]
        self.children.add(pid)
        return pid

    def wait(self, pid: int) -> dict:
        result = self._send(op="wait", pid=pid)
        self.children.discard(pid)
        return result

    def poll(self, pid: int) -> dict:
        result = self._send(op="poll", pid=pid)
        if not result["running"]:
            self.children.discard(pid)
        return result

    def close(self) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
                self.wait(pid)
            except (OSError, RuntimeError):
                pass
        try:
            self._send(op="exit")
        except (OSError, RuntimeError, ValueError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class EventStream:
    """The events a child writes to its FIFO; opened read-write so it never reads end-of-file early."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.buffer = b""

    def next(self, timeout: float) -> tuple[str, str, float] | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                self.buffer += os.read(self.fd, 65536)
            elif left == 0.0:
                return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        kind, value, stamp = line.decode().split(" ")
        return kind, value, float(stamp)

    def drain(self) -> list[tuple[str, str, float]]:
        events = []
        while (event := self.next(0.0)) is not None:
            events.append(event)
        return events

    def close(self) -> None:
        os.close(self.fd)


@dataclass
class Trial:
    """One kill: which save it hit, what it left on disk, and where the next process resumed."""

    index: int
    killed_step: int
    delay_ms: float
    saved_event: bool  # the killed save's SAVED event arrived before the kill
    left: str  # "absent" | "rejected by Trainer: <why>" | "unmarked, Trainer-complete" | "complete"
    # what ``get_last_checkpoint(output_dir)`` (a plain ``resume_from_checkpoint=True``) picks after the
    # kill, and its state as in ``left``: "checkpoint-7: rejected by Trainer: ..." (or "None")
    unguarded: str = ""
    resumed_from: int | None = None


@dataclass
class ChainReport:
    trials: list[Trial] = field(default_factory=list)
    save_times_ms: list[float] = field(default_factory=list)
    # process index → ``(kind, value)`` of its events outside CHAIN_EVENTS, in order
    extra: dict[int, list[tuple[str, str]]] = field(default_factory=dict)

    def count(self, prefix: str) -> int:
        return sum(trial.left.startswith(prefix) for trial in self.trials)

    def summary(self) -> str:
        rows = [
            f"  #{t.index:2d} kill at step {t.killed_step} +{t.delay_ms:5.1f} ms → {t.left}; resumed from "
            f"{t.resumed_from}"
            for t in self.trials
        ]
        return "\n".join(rows)


def _step(path: str) -> int | None:
    return None if path == "None" else int(path.rsplit("-", 1)[1])


def _unguarded_choice(output_dir: Path) -> str:
    from transformers.trainer_utils import get_last_checkpoint

    folder = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
    return "None" if folder is None else f"{Path(folder).name}: {_folder_state(Path(folder))}"


def _folder_state(folder: Path) -> str:
    from trainwright.callbacks.checkpoint_guard import marker_problem, trainer_check_problem

    if not folder.is_dir():
        return "absent"
    if marker_problem(folder) is None:
        return "complete"
    problem = trainer_check_problem(folder)
    return "unmarked, Trainer-complete" if problem is None else f"rejected by Trainer: {problem}"


class _ChildRun:
    """One process of the chain: its events, and failures that show the chain so far and the child's log."""

    def __init__(
        self,
        zygote: Zygote,
        pid: int,
        events: EventStream,
        log: Path,
        index: int,
        report: ChainReport,
        timeout: float,
    ) -> None:
        self.zygote, self.pid, self.events, self.log = zygote, pid, events, log
        self.index, self.report, self.timeout = index, report, timeout

    def fail(self, message: str) -> AssertionError:
        tail = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else "(no log)"
        return AssertionError(
            f"trial {self.index}: {message}\n{self.report.summary()}\n--- child log tail ---\n{tail}"
        )

    def collect(self, event: tuple[str, str, float]) -> bool:
        """Keep an event outside CHAIN_EVENTS in ``report.extra``; say whether it was one."""
        if event[0] in CHAIN_EVENTS:
            return False
        self.report.extra.setdefault(self.index, []).append(event[:2])
        return True

    def next_event(self, kind: str | None = None) -> tuple[str, str, float]:
        """The next chain event (of ``kind`` if given); fails if the child ends or stays silent."""
        deadline = time.monotonic() + self.timeout
        while True:
            while (event := self.events.next(0.5)) is None:
                status = self.zygote.poll(self.pid)
                if not status["running"]:
                    event = self.events.next(0.0)
                    if event is None:
                        raise self.fail(f"the child ended without sending an event: {status}")
                    break
                if time.monotonic() > deadline:
                    raise self.fail(f"no event within {self.timeout}s")
            if not self.collect(event):
                break
        if kind is not None and event[0] != kind:
            raise self.fail(f"expected {kind}, got {event}")
        return event


def run_kill_chain(
    zygote: Zygote,
    child_script: str,
    workdir: Path,
    trials: int = 20,
    seed: int = 0,
    clean_saves: Sequence[int] = (1, 2),
    delay_factor: float = 1.2,
    event_timeout: float = 60.0,
    on_kill: Callable[[Trial, Path], None] | None = None,
) -> ChainReport:
    """Run the chain described in the module docstring; raise ``AssertionError`` on any wrong resume."""
    rng = random.Random(seed)
    output_dir = workdir / "run"
    report = ChainReport()
    expected: set[int | None] = {None}
    last_saved: int | None = None
    warm_save_ms: list[float] = []

    for index in range(trials + 1):
        final = index == trials
        events = EventStream(workdir / f"events-{index}.fifo")
        log = workdir / f"child-{index}.log"
        pid = zygote.spawn(child_script, events.path, output_dir, log, stop_after=1 if final else None)

        child = _ChildRun(zygote, pid, events, log, index, report, event_timeout)
        fail, next_event = child.fail, child.next_event

        _, resumed, _ = next_event("RESUMED")
        resumed_step = _step(resumed)
        if report.trials:
            report.trials[-1].resumed_from = resumed_step
        if resumed_step not in expected:
            raise fail(f"resumed from {resumed}, expected a checkpoint of step {sorted(expected, key=str)}")
        if (
            report.trials
            and report.trials[-1].left == "complete"
            and resumed_step != report.trials[-1].killed_step
        ):
            raise fail(
                f"resumed from {resumed} although checkpoint-{report.trials[-1].killed_step} is complete"
            )
        _, begin, _ = next_event("BEGIN")
        if int(begin) != (resumed_step or 0):
            raise fail(f"training began at step {begin} after resuming from {resumed}")

        if final:
            while next_event()[0] != "SAVED":  # one step, one save, then a clean exit
                pass
            status = zygote.wait(pid)
            events.close()
            if status["code"] != 0:
                raise fail(f"the last process did not finish cleanly: {status}")
            break

        wanted_clean = rng.choice(list(clean_saves))
        started: dict[int, float] = {}
        first_in_process = True
        while True:
            kind, value, stamp = next_event()
            step = int(value)
            if kind == "SAVED":
                elapsed = (stamp - started[step]) * 1000
                report.save_times_ms.append(elapsed)
                if not first_in_process:
                    warm_save_ms.append(elapsed)
                first_in_process = False
                last_saved = step
                continue
            if kind != "SAVING":
                raise fail(f"unexpected event {kind} {value}")
            started[step] = stamp
            if len(started) == 1 and step != (resumed_step or 0) + 1:
                raise fail(f"first save after resuming from {resumed} is at step {step}")
            if len(started) > wanted_clean:
                window = statistics.median(warm_save_ms[-6:]) if warm_save_ms else 30.0
                # skewed to the start (P(delay < x) = sqrt(x / max)): the Trainer's own files come first,
                # the guard's fsyncs (which can take most of a save on a busy disk) come last
                delay = rng.random() ** 2 * delay_factor * window / 1000
                time.sleep(max(0.0, delay - (time.monotonic() - stamp)))
                os.kill(pid, signal.SIGKILL)
                killed_step = step
                break
        status = zygote.wait(pid)
        if status["signal"] != signal.SIGKILL:
            raise fail(f"child was not killed by SIGKILL: {status}")
        # events sent between our SAVING read and the kill: the child may have finished that save and
        # started others (a slow poll, a descheduled test process); the kill hit the last one started
        for kind, value, stamp in events.drain():
            if child.collect((kind, value, stamp)):
                continue
            if kind == "SAVING":
                killed_step = int(value)
            elif kind == "SAVED":
                last_saved = int(value)
        saved_event = last_saved == killed_step
        events.close()
        report.trials.append(
            Trial(
                index=index,
                killed_step=killed_step,
                delay_ms=delay * 1000,
                saved_event=saved_event,
                left=_folder_state(output_dir / f"checkpoint-{killed_step}"),
                unguarded=_unguarded_choice(output_dir),
            )
        )
        if on_kill is not None:
            on_kill(report.trials[-1], output_dir)
        expected = {killed_step} if saved_event else {killed_step, last_saved}
    return report
