"""A completions table (prompt, completion, rewards, advantage) written at every log event.

Why a callback: looking at what the policy actually generates is the first debugging step of any RL
run (reward hacking shows up there long before it shows in the curves). The trainer only *hands over*
rows (:meth:`CompletionsLogCallback.add_rows`); this callback decides where they go: a JSONL file
(one JSON object per completion, with the optimiser step) and, when enabled, the W&B table
reporter. Only the main process writes; the trainer gathers nothing for it, so each process's rows
are its own share (the main process's share is logged).
"""

from __future__ import annotations

import json
import os
from typing import Any

from transformers import TrainerCallback


class CompletionsLogCallback(TrainerCallback):
    """Buffers completion rows and flushes them to ``path`` (JSONL) and W&B when the Trainer logs."""

    def __init__(self, path: str | None = None, max_rows_per_log: int | None = None) -> None:
        self.path = path
        self.max_rows_per_log = max_rows_per_log
        self.pending: list[dict[str, Any]] = []
        self.rows_written = 0

    def add_rows(self, rows: list[dict[str, Any]]) -> None:
        """Queue rows (JSON-serialisable dicts) until the next log event."""
        self.pending.extend(rows)

    def _resolve_path(self, args: Any) -> str:
        return self.path or os.path.join(args.output_dir, "completions.jsonl")

    def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001 - TrainerCallback signature
        if not self.pending:
            return control
        rows, self.pending = self.pending, []
        if self.max_rows_per_log is not None:
            rows = rows[: self.max_rows_per_log]
        if not state.is_world_process_zero:
            return control
        path = self._resolve_path(args)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps({"step": state.global_step, **row}, default=str) + "\n")
        self.rows_written += len(rows)
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
