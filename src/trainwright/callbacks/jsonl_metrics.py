"""Every log line (training, evaluation, final summary) appended to a JSONL file.

Replaces ``log`` overrides that also write ``logs`` to a file — the override whose signature changed
in transformers 4.47 (``log(self, logs)`` → ``log(self, logs, start_time=None)``).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._write_failures import WriteFailures
from trainwright.callbacks.checkpointed import output_dir
from trainwright.storage.atomic import append_bytes, atomic_write_bytes, drop_torn_tail


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf", "-inf": strict JSON has no such numbers
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


class JSONLMetricsCallback(TrainerCallback):
    """Append ``{"step", "epoch", "time", **logs}`` to ``path`` for every ``on_log``.

    Replaces: ``log`` overrides that write metrics to a file.

    Event: ``on_log`` (training lines, every evaluation and the final summary). The line holds what
    the callbacks *before* this one added, so register it after them (e.g. with ``callbacks=[...]`` and
    the log-adding callbacks via ``attach``). Non-finite numbers are written as the strings ``"nan"``,
    ``"inf"``, ``"-inf"`` so every line is strict JSON. Main process only.

    ``path`` defaults to ``<output_dir>/metrics.jsonl``. On resume (``global_step > 0`` at
    ``on_train_begin``) lines with a ``step`` beyond the checkpoint are dropped when
    ``truncate_on_resume`` — they belong to the abandoned part of the earlier run — so the file reads
    like one run. The file is rewritten atomically (temporary file, fsync, ``os.replace``): a crash
    during the rewrite leaves the old file, not a half-written one.

    I/O never stops training — the file is a copy of ``state.log_history``, which the checkpoint keeps:

    * A line that cannot be written (unwritable or missing folder, a path under a file, full disk) is
      lost from the file and a warning says which step and why. The callback keeps trying with the
      next line (a disk can be freed, a mount come back); later failures of the same streak are only
      counted, and when writing works again — or at the end of training if it never does — one more
      warning says how many lines, from which steps, are missing. A failed append is cut back, so the
      file never holds half a line.
    * A torn last line (a crash while writing it) is cut off at ``on_train_begin`` with a warning
      instead of blocking the resume; with ``truncate_on_resume`` every line that is not a JSON
      object is dropped the same way. A torn tail whose text is still a whole JSON record only lacks
      its newline and is kept.
    """

    def __init__(self, path: str | Path | None = None, truncate_on_resume: bool = True) -> None:
        if path is not None and not isinstance(path, (str, Path)):
            raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
        self.path = Path(path) if path is not None else None
        self.truncate_on_resume = truncate_on_resume
        self._resolved: Path | None = None
        self._failures = WriteFailures("JSONLMetricsCallback", "log line")

    @property
    def lines_lost(self) -> int:
        """Log lines that could not be written over the whole run, for the caller to check."""
        return self._failures.total

    def resolved_path(self, args: TrainingArguments) -> Path:
        return self.path if self.path is not None else Path(output_dir(args)) / "metrics.jsonl"

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._resolved = self.resolved_path(args)
        if not state.is_world_process_zero:
            return
        try:
            self._resolved.parent.mkdir(parents=True, exist_ok=True)
            self._repair(state.global_step)
        except OSError as error:
            warnings.warn(
                f"JSONLMetricsCallback: cannot prepare {self._resolved} ({type(error).__name__}: {error}); "
                "training continues and each log line will still be tried",
                stacklevel=2,
            )

    def _repair(self, global_step: int) -> None:
        """Cut a torn tail; on resume also drop the abandoned lines beyond ``global_step``."""
        path = self._resolved
        assert path is not None
        if not path.is_file():
            return
        if not (self.truncate_on_resume and global_step > 0):
            fragment = drop_torn_tail(path)
            if fragment is not None:
                self._report_torn_tail(path, fragment)
            return
        raw = path.read_bytes()
        lines = raw.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline
        kept: list[bytes] = []
        dropped_lines = 0
        for number, line in enumerate(lines, start=1):
            record = _record(line)
            if record is None:
                if line.strip():
                    dropped_lines += 1
                    warnings.warn(
                        f"JSONLMetricsCallback: line {number} of {path} is not a JSON object and is dropped: "
                        f"{line[:80]!r}",
                        stacklevel=3,
                    )
                continue
            if _step(record) <= global_step:
                kept.append(line)
        if tail:
            record = _record(tail)
            if record is None:
                self._report_torn_tail(path, tail)
            elif _step(record) <= global_step:
                kept.append(tail)
        new = b"".join(line + b"\n" for line in kept)
        if new != raw:
            atomic_write_bytes(path, new)

    @staticmethod
    def _report_torn_tail(path: Path, fragment: bytes) -> None:
        if _record(fragment) is not None:
            append_bytes(path, fragment + b"\n")  # a whole record that only lacks its newline
            return
        warnings.warn(
            f"JSONLMetricsCallback: the last line of {path} was torn (a crash while it was written?) and is "
            f"ignored: {fragment[:80]!r}",
            stacklevel=3,
        )

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is None or not state.is_world_process_zero:
            return
        path = self._resolved or self.resolved_path(args)
        record = {
            "step": state.global_step,
            "epoch": state.epoch,
            "time": time.time(),
            **_jsonable(dict(logs)),
        }
        data = (json.dumps(record, allow_nan=False) + "\n").encode("utf-8")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if self._failures.in_streak:
                drop_torn_tail(path)  # a failed append whose cut-back failed too
            append_bytes(path, data)
        except OSError as error:
            self._failures.failed(
                state.global_step,
                1,
                f"could not write the log line of step {state.global_step} to {path} "
                f"({type(error).__name__}: {error}); the line is lost from the file (it is still in "
                "trainer.state.log_history). Training continues; the next lines will be tried again and "
                "further failures are counted, not repeated.",
            )
            return
        self._failures.succeeded(state.global_step, path)

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._failures.finish(self._resolved or self.resolved_path(args))


def _record(line: bytes) -> dict[str, Any] | None:
    """The JSON object on ``line``, or ``None`` if it is not one (torn, garbage, another JSON value)."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _step(record: dict[str, Any]) -> float:
    step = record.get("step", 0)
    return step if isinstance(step, (int, float)) else 0
