"""Every log line (training, evaluation, final summary) appended to a JSONL file.

Replaces ``log`` overrides that also write ``logs`` to a file — the override whose signature changed
in transformers 4.47 (``log(self, logs)`` → ``log(self, logs, start_time=None)``).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments


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
    like one run.
    """

    def __init__(self, path: str | Path | None = None, truncate_on_resume: bool = True) -> None:
        if path is not None and not isinstance(path, (str, Path)):
            raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
        self.path = Path(path) if path is not None else None
        self.truncate_on_resume = truncate_on_resume
        self._resolved: Path | None = None

    def resolved_path(self, args: TrainingArguments) -> Path:
        return self.path if self.path is not None else Path(args.output_dir) / "metrics.jsonl"

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._resolved = self.resolved_path(args)
        if not state.is_world_process_zero:
            return
        self._resolved.parent.mkdir(parents=True, exist_ok=True)
        if self.truncate_on_resume and state.global_step > 0 and self._resolved.is_file():
            kept = [
                line
                for line in self._resolved.read_text(encoding="utf-8").splitlines()
                if line.strip() and json.loads(line).get("step", 0) <= state.global_step
            ]
            self._resolved.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")

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
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "step": state.global_step,
            "epoch": state.epoch,
            "time": time.time(),
            **_jsonable(dict(logs)),
        }
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, allow_nan=False) + "\n")
