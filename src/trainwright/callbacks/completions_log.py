"""The GRPO completions table: what the policy generates, in JSONL, W&B and the console.

Why a callback: where rows go and when they are flushed (at every log event) is the loop's timing,
not the trainer's; ``GRPOTrainer`` attaches it from ``log_completions`` and only hands it rows.
"""

from __future__ import annotations

import json
import os
from typing import Any

from transformers import TrainerCallback

from trainwright.callbacks._write_failures import WriteFailures
from trainwright.storage.atomic import append_bytes, drop_torn_tail


class CompletionsLogCallback(TrainerCallback):
    """Buffers completion rows and flushes them to ``path`` (JSONL) and W&B when the Trainer logs.

    Looking at what the policy actually generates is the first debugging step of any RL run (reward
    hacking shows up there long before it shows in the curves). The trainer only *hands over* rows
    (:meth:`add_rows`: prompt, completion, rewards, advantage, and any column a reward function added
    with ``log_extra``); this callback decides where they go. Only the main process writes; the trainer
    gathers nothing for it, so each process's rows are its own share (the main process's are logged).
    ``num_to_print`` rows of each flush are also printed as plain text.

    I/O never stops training (a completions table is a debugging aid, the run is the work): rows that
    cannot be written (full disk, file-size limit, unwritable folder: any ``OSError``) are lost from the
    file with one warning naming the step, the file and the error; later failures of the same streak are
    counted, and one more warning says how many rows are missing when writing works again or training
    ends (:class:`~trainwright.callbacks._write_failures.WriteFailures`, shared with
    :class:`~trainwright.callbacks.JSONLMetricsCallback`). They are still printed and sent to W&B. A
    failed append is cut back, so the file holds whole lines only.
    """

    def __init__(
        self, path: str | None = None, max_rows_per_log: int | None = None, num_to_print: int | None = None
    ) -> None:
        self.path = path
        self.max_rows_per_log = max_rows_per_log
        self.num_to_print = num_to_print
        self.pending: list[dict[str, Any]] = []
        self.rows_written = 0
        self._failures = WriteFailures("CompletionsLogCallback", "completion row")

    @property
    def rows_lost(self) -> int:
        """Rows that could not be written to the file over the whole run."""
        return self._failures.total

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Queue rows (JSON-serialisable dicts) until the next log event."""
        self.pending.extend(rows)

    def _resolve_path(self, args: Any) -> str:
        return self.path or os.path.join(args.output_dir, "completions.jsonl")

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not self.pending:
            return control
        rows, self.pending = self.pending, []
        if self.max_rows_per_log is not None:
            rows = rows[: self.max_rows_per_log]
        if not state.is_world_process_zero:
            return control
        self._write(self._resolve_path(args), state.global_step, rows)
        if self.num_to_print:
            print(format_rows(rows[: self.num_to_print], state.global_step, len(rows)))
        self._to_wandb(args, state, rows)
        return control

    def _write(self, path: str, step: int, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` to ``path`` as whole lines; an I/O error is a warning, never the end of the run."""
        lines = (json.dumps({"step": step, **row}, default=str) + "\n" for row in rows)
        data = "".join(lines).encode("utf-8")
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if self._failures.in_streak:
                drop_torn_tail(path)  # a failed append whose cut-back failed too
            append_bytes(path, data)  # whole lines, or none if the write fails
        except OSError as error:
            self._failures.failed(
                step,
                len(rows),
                f"could not write the {len(rows)} completion rows of step {step} to {path} "
                f"({type(error).__name__}: {error}); they are lost from the file (still printed and sent "
                "to W&B where configured). Training continues; the next rows will be tried again and "
                "further failures are counted, not repeated.",
            )
            return
        self.rows_written += len(rows)
        self._failures.succeeded(step, path)

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self._failures.finish(self._resolve_path(args))
        return control

    @staticmethod
    def _to_wandb(args: Any, state: Any, rows: list[dict[str, Any]]) -> None:
        report_to = args.report_to if isinstance(args.report_to, list) else [args.report_to]
        if "wandb" not in report_to or not rows:
            return
        try:
            import wandb
        except ImportError:  # reporter enabled but not installed: the Trainer already warned
            return
        if wandb.run is None:
            return
        columns = sorted({key for row in rows for key in row})
        table = wandb.Table(columns=["step", *columns])
        for row in rows:
            table.add_data(state.global_step, *[json.dumps(row.get(c), default=str) for c in columns])
        wandb.log({"completions": table}, step=state.global_step)


def _short(value: Any, limit: int = 70) -> str:
    if isinstance(value, list) and value and isinstance(value[-1], dict) and "content" in value[-1]:
        value = value[-1]["content"]  # a conversation: show its last message
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def format_rows(rows: list[dict[str, Any]], step: int, total: int) -> str:
    """Plain-text rendering of completion rows (what ``num_completions_to_print`` prints)."""
    lines = [f"completions at step {step} ({len(rows)} of {total} rows)"]
    for i, row in enumerate(rows):
        rewards = " ".join(f"{name}={_number(value)}" for name, value in row.get("rewards", {}).items())
        extra = " ".join(
            f"{key}={_short(value, 30)}"
            for key, value in row.items()
            if key not in ("prompt", "completion", "rewards", "advantage")
        )
        lines.append(f"[{i}] prompt:     {_short(row.get('prompt'))}")
        lines.append(f"    completion: {_short(row.get('completion'))}")
        lines.append(f"    rewards: {rewards}  advantage={_number(row.get('advantage'))}  {extra}".rstrip())
    return "\n".join(lines)


__all__ = ["CompletionsLogCallback", "format_rows"]
