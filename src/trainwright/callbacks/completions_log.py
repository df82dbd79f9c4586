"""The GRPO completions table: what the policy generates, in JSONL, W&B and the console.

Why a callback: where rows go and when they are flushed (at every log event) is the loop's timing,
not the trainer's; ``GRPOTrainer`` attaches it from ``log_completions`` and only hands it rows.
"""

from __future__ import annotations

import json
import os
from typing import Any

from transformers import TrainerCallback

from trainwright.storage.atomic import append_bytes


class CompletionsLogCallback(TrainerCallback):
    """Buffers completion rows and flushes them to ``path`` (JSONL) and W&B when the Trainer logs.

    Looking at what the policy actually generates is the first debugging step of any RL run (reward
    hacking shows up there long before it shows in the curves). The trainer only *hands over* rows
    (:meth:`add_rows`: prompt, completion, rewards, advantage, and any column a reward function added
    with ``log_extra``); this callback decides where they go. Only the main process writes; the trainer
    gathers nothing for it, so each process's rows are its own share (the main process's are logged).
    ``num_to_print`` rows of each flush are also printed as plain text.
    """

    def __init__(
        self, path: str | None = None, max_rows_per_log: int | None = None, num_to_print: int | None = None
    ) -> None:
        self.path = path
        self.max_rows_per_log = max_rows_per_log
        self.num_to_print = num_to_print
        self.pending: list[dict[str, Any]] = []
        self.rows_written = 0

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
        path = self._resolve_path(args)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        lines = (json.dumps({"step": state.global_step, **row}, default=str) + "\n" for row in rows)
        append_bytes(path, "".join(lines).encode("utf-8"))  # whole lines, or none if the write fails
        self.rows_written += len(rows)
        if self.num_to_print:
            print(format_rows(rows[: self.num_to_print], state.global_step, len(rows)))
        self._to_wandb(args, state, rows)
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
