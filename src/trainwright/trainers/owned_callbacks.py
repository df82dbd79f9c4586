"""The callbacks the reference trainers attach themselves, in one place.

Why callbacks: what they do is timing logic tied to the training loop's events (sync the reference
after every τ-th optimizer step, flush a table at every log), which belongs in ``on_step_end`` /
``on_log``, not in ``compute_loss``. The trainers attach them from their configuration
(:func:`trainwright.trainers.construction.attach_owned_callbacks`); users can also attach them to
any ``Trainer``. They stay importable from ``trainwright.callbacks`` as before.

* :class:`ReferenceSyncCallback`: TR-DPO. Its blended reference is *training state* (it is no longer
  a copy of the initial policy once a sync ran), so it is written into every checkpoint and restored on
  resume; without that, a resumed run would compute its KL / preference terms against the wrong
  reference and diverge from the uninterrupted one.
* :class:`CompletionsLogCallback`: the GRPO completions table (JSONL, W&B, and optionally a few rows
  printed to the console).

(``SaveRoundBufferCallback``, which writes the GRPO generation buffer into checkpoints, lives with
the buffer in :mod:`trainwright.trainers.grpo_buffer`.)
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from trainwright.trainers.distributed import full_state_dict, load_full_state_dict, reshard
from trainwright.trainers.tensor_files import UNREADABLE, load_tensor_file, refused_global


class CheckpointedCallback(TrainerCallback):
    """A trainer-owned callback whose state lives in checkpoint folders (saved in ``on_save``).

    Restoring happens in the trainer's ``train`` (callbacks are not told which checkpoint a run resumes
    from): it calls :meth:`load_checkpoint` on each of these, see :func:`restore_from_checkpoint`.
    """

    def load_checkpoint(self, folder: str) -> bool:
        """Restore the state saved in ``folder``; return whether there was any."""
        raise NotImplementedError


def restore_from_checkpoint(callbacks: Iterable[TrainerCallback], folder: str) -> None:
    """Let every :class:`CheckpointedCallback` in ``callbacks`` restore its state from ``folder``."""
    for callback in callbacks:
        if isinstance(callback, CheckpointedCallback):
            callback.load_checkpoint(folder)


def checkpoint_folder(args: TrainingArguments, state: TrainerState) -> str:
    """The folder the Trainer just wrote for this ``on_save`` (``output_dir/checkpoint-<step>``)."""
    return os.path.join(args.output_dir, f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}")


# --------------------------------------------------------------------------------------------------
# TR-DPO
# --------------------------------------------------------------------------------------------------
class ReferenceSyncCallback(CheckpointedCallback):
    """Every ``sync_steps`` optimizer steps set ``ref ← alpha·policy + (1−alpha)·ref``, parameter by parameter.

    TR-DPO: Gorbatovski et al. 2024, "Learn Your Reference Model for Real Good Alignment",
    arXiv:2404.09656. α=1 is a hard reset to the current policy. A fixed reference lets the policy drift
    far only at a growing KL cost; updating the reference softly relaxes that constraint over training.

    ``on_step_end`` runs once per optimizer step, after the update, on every process; since
    data-parallel ranks hold identical policies, every rank's reference stays identical too.
    ``on_save`` writes the reference into the checkpoint (:data:`CHECKPOINT_FILE`); the trainers
    restore it on resume (:meth:`load_checkpoint`).
    """

    CHECKPOINT_FILE = "reference_sync.pt"

    def __init__(self, ref_model: nn.Module, alpha: float = 0.6, sync_steps: int = 512) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        if sync_steps < 1:
            raise ValueError(f"sync_steps must be >= 1, got {sync_steps}")
        self.ref_model = ref_model
        self.alpha = alpha
        self.sync_steps = sync_steps
        self.num_syncs = 0

    @torch.no_grad()
    def sync(self, model: nn.Module) -> None:
        """Blend ``model``'s parameters into the reference (names must match one to one).

        Under FSDP2 both are sharded the same way, so each process blends its own shards; they are resharded
        first (a unit left gathered after a forward would expose its full tensor instead of its shard).
        """
        reshard(self.ref_model)
        reshard(model)
        ref_params = dict(self.ref_model.named_parameters())
        policy_params = dict(model.named_parameters())
        if ref_params.keys() != policy_params.keys():
            missing = sorted(ref_params.keys() ^ policy_params.keys())[:5]
            raise ValueError(
                f"reference and policy parameters differ (e.g. {missing}); TR-DPO needs the same architecture"
            )
        for name, ref_param in ref_params.items():
            ref_param.mul_(1.0 - self.alpha).add_(
                policy_params[name].detach().to(ref_param.dtype), alpha=self.alpha
            )
        self.num_syncs += 1

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        model = kwargs.get("model")
        if model is not None and state.global_step % self.sync_steps == 0:
            self.sync(model)

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        folder = checkpoint_folder(args, state)
        state_dict = full_state_dict(self.ref_model)  # under FSDP a collective: every process takes part
        if not args.should_save or not os.path.isdir(folder):
            return
        payload = {"state_dict": state_dict, "num_syncs": self.num_syncs}
        _atomic_torch_save(payload, os.path.join(folder, self.CHECKPOINT_FILE))

    def load_checkpoint(self, folder: str) -> bool:
        path = os.path.join(folder, self.CHECKPOINT_FILE)
        problem = None if os.path.exists(path) else "holds no"
        payload: dict[str, Any] = {}
        if problem is None:
            try:
                payload = load_tensor_file(path)  # never unpickles anything but tensors and plain data
                num_syncs = int(payload["num_syncs"])
            except UNREADABLE as error:
                foreign = refused_global(error)
                problem = (
                    f"has a foreign ({foreign}: not loaded, it could run code)" if foreign else "cannot read its"
                )
        if problem is not None:
            warnings.warn(
                f"{folder} {problem} TR-DPO reference ({self.CHECKPOINT_FILE}, written by trainwright's "
                "ReferenceSyncCallback): the resumed run continues from the reference it was built with, not "
                "the blended one, so it will differ from an uninterrupted run",
                stacklevel=2,
            )
            return False
        load_full_state_dict(self.ref_model, payload["state_dict"])
        self.num_syncs = num_syncs
        return True


def _atomic_torch_save(obj: Any, path: str) -> None:
    """``torch.save`` to a hidden temporary file in the same folder, fsync, then rename over ``path``:
    a crash during the save leaves no half-written file under the real name."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            torch.save(obj, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


# --------------------------------------------------------------------------------------------------
# GRPO completions table
# --------------------------------------------------------------------------------------------------
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
        with open(path, "a", encoding="utf-8") as handle:
            handle.writelines(json.dumps({"step": state.global_step, **row}, default=str) + "\n" for row in rows)
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


__all__ = [
    "CheckpointedCallback",
    "CompletionsLogCallback",
    "ReferenceSyncCallback",
    "format_rows",
    "restore_from_checkpoint",
]
