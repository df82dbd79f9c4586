"""Checkpoints that survive a crash: a completion marker per checkpoint, and a resume that skips torn ones.

Why: ``Trainer`` writes ``checkpoint-N`` file by file and nothing says when the folder is finished. A
``kill -9`` (OOM killer, preemption, a hung job killed by the scheduler) during a save leaves a folder
that ``resume_from_checkpoint=True`` picks anyway — ``get_last_checkpoint`` only takes the highest
``checkpoint-N`` that is a directory — and the resume crashes ("Can't find a valid checkpoint at ...",
or a ``JSONDecodeError`` on a half-written ``trainer_state.json``, or a truncated ``optimizer.pt``).

What the Trainer does, in transformers 5.24 (``Trainer._maybe_log_save_evaluate``)::

    _save_checkpoint():  save_model (weights, config, tokenizer)  → optimizer.pt, scheduler.pt, scaler
                         (all three skipped with save_only_model) → rng_state*.pth (skipped too)
                         → trainer_state.json (main process) → push_to_hub → rotate_checkpoints
    callback_handler.on_save()   ← every callback, in list order; the folder is final from here on

So ``on_save`` of the *last* callback is the first moment at which the folder is complete, including
files that earlier callbacks write in their own ``on_save`` (``CheckpointExtrasCallback``, the GRPO
generation buffer). :class:`CheckpointGuardCallback` writes ``checkpoint_complete.json`` there, and
:func:`newest_complete_checkpoint` resumes from the newest folder that has a valid one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any, Literal

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR
from transformers.utils import (
    ADAPTER_SAFE_WEIGHTS_NAME,
    ADAPTER_WEIGHTS_NAME,
    SAFE_WEIGHTS_INDEX_NAME,
    SAFE_WEIGHTS_NAME,
    WEIGHTS_INDEX_NAME,
    WEIGHTS_NAME,
)

from trainwright.callbacks.checkpointed import output_dir
from trainwright.storage.atomic import atomic_write_bytes, fsync_dir, fsync_file

#: the marker file written into every checkpoint folder once it is complete
COMPLETE_MARKER = "checkpoint_complete.json"
#: prefix of the names torn checkpoint folders are renamed to (outside ``checkpoint-*``, see on_train_begin)
INCOMPLETE_PREFIX = "incomplete-"
_MARKER_FORMAT = 1
_NO_MARKER = f"no {COMPLETE_MARKER}"
_CHECKPOINT_RE = re.compile(rf"^{PREFIX_CHECKPOINT_DIR}-(\d+)$")
_TRAINER_STATE = "trainer_state.json"  # transformers.trainer.TRAINER_STATE_NAME
_FSDP_MODEL_NAME = "pytorch_model_fsdp"  # transformers.trainer.FSDP_MODEL_NAME
_WEIGHT_FILES = (
    WEIGHTS_NAME,
    SAFE_WEIGHTS_NAME,
    WEIGHTS_INDEX_NAME,
    SAFE_WEIGHTS_INDEX_NAME,
    ADAPTER_WEIGHTS_NAME,
    ADAPTER_SAFE_WEIGHTS_NAME,
)


class CheckpointGuardWarning(UserWarning):
    """A checkpoint folder was skipped, set aside or un-marked because it is (or may be) incomplete."""


def _warn(message: str) -> None:
    warnings.warn(message, CheckpointGuardWarning, stacklevel=3)


def checkpoint_folders(output_dir: str | os.PathLike[str]) -> list[tuple[int, Path]]:
    """``(step, folder)`` for every ``checkpoint-<step>`` directory in ``output_dir``, newest first.

    The same names ``transformers.trainer_utils.get_last_checkpoint`` considers (``checkpoint-`` and
    digits only, directories only); an ``output_dir`` that does not exist has none.
    """
    root = Path(output_dir)
    if not root.is_dir():
        return []
    found = []
    for entry in root.iterdir():
        match = _CHECKPOINT_RE.match(entry.name)
        if match and entry.is_dir():
            found.append((int(match.group(1)), entry))
    return sorted(found, key=lambda item: item[0], reverse=True)


def _step_of(folder: Path) -> int | None:
    match = _CHECKPOINT_RE.match(folder.name)
    return int(match.group(1)) if match else None


def _manifest(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` (relative POSIX path → size), without the marker and temp files."""
    files: dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            if name == COMPLETE_MARKER or (name.startswith(f".{COMPLETE_MARKER}.") and name.endswith(".tmp")):
                continue
            path = Path(dirpath) / name
            files[path.relative_to(folder).as_posix()] = path.stat().st_size
    return files


def marker_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why ``folder`` is not marked complete, or ``None`` if its marker is valid.

    Valid: ``checkpoint_complete.json`` parses, names this folder's step, and every file it lists
    exists with the size it had when the guard wrote the marker. The size check catches a folder that
    was complete and then damaged: a rotation (``shutil.rmtree``) killed half-way, a later save into
    the same folder killed half-way, an interrupted copy.
    """
    folder = Path(folder)
    marker = folder / COMPLETE_MARKER
    if not marker.is_file():
        return _NO_MARKER
    try:
        content = json.loads(marker.read_text(encoding="utf-8"))
        files = content["files"]
        step = content["step"]
        if content.get("format") != _MARKER_FORMAT or not isinstance(files, dict):
            raise ValueError("unknown marker format")
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"unreadable {COMPLETE_MARKER} ({type(error).__name__}: {error})"
    folder_step = _step_of(folder)
    if folder_step is not None and step != folder_step:
        return f"{COMPLETE_MARKER} is for step {step}, not {folder_step}"
    for name, size in files.items():
        path = folder / name
        try:
            actual = path.stat().st_size
        except OSError:
            return f"{name} (listed in {COMPLETE_MARKER}) is missing"
        if actual != size:
            return f"{name} has {actual} bytes, {COMPLETE_MARKER} recorded {size}"
    return None


def trainer_check_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why ``Trainer.train(resume_from_checkpoint=folder)`` would fail on ``folder``, or ``None``.

    The Trainer's own test, for folders written without the guard: ``Trainer._load_from_checkpoint``
    (5.24) accepts a folder that has one of ``pytorch_model.bin``, ``model.safetensors``, their
    ``.index.json`` files, ``adapter_model.bin`` / ``adapter_model.safetensors``, an FSDP checkpoint
    (``pytorch_model_fsdp*``) or a sub-folder with adapter weights; otherwise it raises "Can't find a
    valid checkpoint". ``Trainer.train`` then reads ``trainer_state.json`` with
    ``TrainerState.load_from_json``, which fails on a missing or half-written file. Because the Trainer
    writes ``trainer_state.json`` after the weights, optimizer, scheduler and RNG states, a readable
    one also means those were written — against a ``kill -9``; not against power loss (nothing is
    fsynced) nor for files that callbacks add in ``on_save`` (both need the guard's marker).
    """
    folder = Path(folder)
    has_weights = any((folder / name).is_file() for name in _WEIGHT_FILES)
    if not has_weights and folder.is_dir():
        for entry in folder.iterdir():
            if entry.is_dir() and (
                _FSDP_MODEL_NAME in entry.name
                or (entry / ADAPTER_WEIGHTS_NAME).is_file()
                or (entry / ADAPTER_SAFE_WEIGHTS_NAME).is_file()
            ):
                has_weights = True
                break
        has_weights = has_weights or (folder / f"{_FSDP_MODEL_NAME}.bin").is_file()
    if not has_weights:
        return f"no model weights ({SAFE_WEIGHTS_NAME}, {WEIGHTS_NAME}, adapter or FSDP files)"
    try:
        json.loads((folder / _TRAINER_STATE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"no {_TRAINER_STATE}"
    except (OSError, ValueError) as error:
        return f"unreadable {_TRAINER_STATE} ({type(error).__name__}: {error})"
    return None


def newest_complete_checkpoint(output_dir: str | os.PathLike[str]) -> str | None:
    """The newest complete ``checkpoint-N`` folder in ``output_dir`` (a path for ``resume_from_checkpoint``).

    * If any folder has a valid guard marker (:func:`marker_problem`), the newest such folder. Newer
      folders without one were torn by a crash (or damaged later) and are skipped with a
      :class:`CheckpointGuardWarning` that names them and says why.
    * If none has (the guard was not used, or not yet), the newest folder that passes the Trainer's own
      test (:func:`trainer_check_problem`), skipping newer ones with a warning. Folders whose marker
      exists but is invalid are never accepted this way: they were damaged after the guard marked them.
    * ``None`` if there is no such folder (or no ``output_dir``): ``Trainer.train(resume_from_checkpoint=None)``
      then starts from scratch. ``resume_from_checkpoint=True`` raises instead when there is nothing
      to resume from; callers who want that raise themselves on ``None``.

    Read-only and deterministic, so every process of a distributed run gets the same answer.
    """
    folders = checkpoint_folders(output_dir)
    problems = {folder: marker_problem(folder) for _, folder in folders}
    marked = [folder for _, folder in folders if problems[folder] is None]
    if marked:
        chosen = marked[0]
        chosen_step = _step_of(chosen)
        for step, folder in folders:
            if step > (chosen_step or 0):
                extra = ""
                if problems[folder] == _NO_MARKER and trainer_check_problem(folder) is None:
                    extra = (
                        " (the Trainer's own files are there, but the save stopped before every on_save "
                        "writer finished, or the folder was written without CheckpointGuardCallback; "
                        "pass it to resume_from_checkpoint explicitly to use it anyway)"
                    )
                _warn(
                    f"skipping {folder}: not a complete checkpoint ({problems[folder]}){extra}; "
                    f"the newest complete checkpoint is {chosen}"
                )
        return str(chosen)
    for _, folder in folders:
        problem = trainer_check_problem(folder) if problems[folder] == _NO_MARKER else problems[folder]
        if problem is None:
            return str(folder)
        _warn(f"skipping {folder}: not a complete checkpoint ({problem})")
    return None


def _wait_for_everyone() -> None:
    """Barrier across the processes of a distributed run, so that rank 0 marks a folder only after every
    rank wrote its files (``rng_state_<rank>.pth``, a per-rank GRPO buffer, sharded optimizer states)."""
    from accelerate import PartialState

    state = PartialState()
    if state.num_processes > 1:
        state.wait_for_everyone()


class CheckpointGuardCallback(TrainerCallback):
    """Mark every checkpoint complete once it is, and keep torn ones out of resume and rotation.

    Replaces: ``_save_checkpoint`` overrides that write a "done" file, and hand-written
    "find the last good checkpoint" code before ``train(resume_from_checkpoint=...)``.

    Events:

    * ``on_save`` (every process; a barrier first when there are several, then the saving process):
      fsync every file of ``checkpoint-<global_step>`` (``fsync=True``), then write
      ``checkpoint_complete.json`` — the list of files with their sizes — atomically (temporary file,
      fsync, ``os.replace``, fsync of the folder and of ``output_dir``). Register it **last** — after
      every callback that writes into the checkpoint in its own ``on_save`` — by
      ``trainer.add_callback(CheckpointGuardCallback())`` after building the trainer, or as the last
      entry of ``callbacks=[...]`` for a plain ``Trainer``.
    * ``on_train_begin`` (saving process): every ``checkpoint-N`` with ``N`` beyond the step training
      starts from is from a crashed save or from the abandoned part of an earlier run. Folders without
      a valid marker are renamed to ``incomplete-checkpoint-N`` (``torn="rename"``, the default) or
      deleted (``torn="delete"``): outside the ``checkpoint-*`` names, the Trainer's rotation
      (``save_total_limit``) no longer counts them, so a torn folder can never be kept as "the most
      recent checkpoint" while the newest complete one is deleted, and this run's save at step ``N``
      writes into a fresh folder instead of one with stale half-written files. Folders *with* a
      marker lose it (this run overwrites them at step ``N``; until then they are not part of this
      run's history, so a crash-resume does not jump to them).

    Resume with :func:`newest_complete_checkpoint`::

        trainer.train(resume_from_checkpoint=newest_complete_checkpoint(args.output_dir))

    (``None`` when there is none: training starts from scratch.) A callback cannot make
    ``resume_from_checkpoint=True`` safe: ``Trainer.train`` turns ``True`` into
    ``get_last_checkpoint(output_dir)`` — the highest-numbered folder, torn or not — before the first
    callback event of the run.
    """

    def __init__(self, fsync: bool = True, torn: Literal["rename", "delete"] = "rename") -> None:
        if torn not in ("rename", "delete"):
            raise ValueError(f"torn must be 'rename' or 'delete', got {torn!r}")
        self.fsync = fsync
        self.torn = torn
        self._warned_missing = False

    # ------------------------------------------------------------------ train begin
    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if not args.should_save:
            return
        for step, folder in checkpoint_folders(output_dir(args)):
            if step <= state.global_step:
                continue
            try:
                self._set_aside(folder, step, marker_problem(folder), state.global_step)
            except OSError as error:  # e.g. another node moved it first (save_on_each_node on a shared disk)
                _warn(
                    f"CheckpointGuardCallback: could not set aside {folder} ({type(error).__name__}: {error})"
                )

    def _set_aside(self, folder: Path, step: int, problem: str | None, start_step: int) -> None:
        """Un-mark a complete folder beyond the start step, or move a torn one out of ``checkpoint-*``."""
        if problem is None:
            (folder / COMPLETE_MARKER).unlink()
            fsync_dir(folder)
            _warn(
                f"{folder} is beyond step {start_step}, where this run starts: it belongs to the abandoned part "
                f"of an earlier run, so its {COMPLETE_MARKER} was removed (this run overwrites the folder when "
                f"it saves at step {step})"
            )
            return
        if self.torn == "delete":
            shutil.rmtree(folder)
            where = "deleted it"
        else:
            target = self._free_name(folder)
            os.replace(folder, target)
            where = f"renamed it to {target.name}"
        fsync_dir(folder.parent)
        _warn(
            f"{folder} is not a complete checkpoint ({problem}) and lies beyond step {start_step}, where this "
            f"run starts: {where}, so that checkpoint rotation and this run's own save at step {step} do not "
            "mix with its files"
        )

    @staticmethod
    def _free_name(folder: Path) -> Path:
        target = folder.with_name(INCOMPLETE_PREFIX + folder.name)
        index = 1
        while target.exists():
            target = folder.with_name(f"{INCOMPLETE_PREFIX}{folder.name}.{index}")
            index += 1
        return target

    # ------------------------------------------------------------------ save
    def checkpoint_dir(self, args: TrainingArguments, state: TrainerState) -> Path:
        return Path(output_dir(args)) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        _wait_for_everyone()
        if not args.should_save:
            return
        folder = self.checkpoint_dir(args, state)
        if not folder.is_dir():
            if not self._warned_missing:
                self._warned_missing = True
                _warn(
                    f"CheckpointGuardCallback: no checkpoint folder {folder} after the save at step "
                    f"{state.global_step} (hyper-parameter search writes per-trial folders, which the guard "
                    "does not handle): checkpoints are not marked"
                )
            return
        self.mark_complete(folder, state.global_step)

    def mark_complete(self, folder: str | os.PathLike[str], step: int) -> Path:
        """Write the completion marker of ``folder`` (a finished ``checkpoint-<step>``) and return its path."""
        folder = Path(folder)
        files = _manifest(folder)
        if self.fsync:
            for name in files:
                fsync_file(folder / name)
            for dirpath, _, _ in os.walk(folder):
                fsync_dir(dirpath)
        content = {"format": _MARKER_FORMAT, "step": step, "files": files}
        marker = folder / COMPLETE_MARKER
        # the marker itself is always durable (one small file): only the checkpoint's files are optional
        atomic_write_bytes(marker, (json.dumps(content, indent=1, sort_keys=True) + "\n").encode())
        fsync_dir(folder.parent)
        return marker
