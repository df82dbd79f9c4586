"""Write extra files (configs, a tokenizer, metadata, a function's output) into every checkpoint folder.

Replaces ``_save_checkpoint`` / ``_save`` / ``save_model`` overrides that call ``super()`` and then
write their own files next to the weights — the overrides that break when the private signature
changes (``_save_checkpoint`` lost its ``metrics`` argument in transformers 4.47).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from trainwright.callbacks.checkpointed import output_dir
from trainwright.storage.atomic import atomic_write_bytes

#: a callable extra is called as ``fn(checkpoint_dir, state)``; it returns the content, or None if it wrote the file
ExtraFunction = Callable[[Path, TrainerState], Any]


def _write(path: Path, content: Any, name: str) -> None:
    # single files are replaced atomically: a crash leaves the previous file or none, never half of one
    if hasattr(content, "save_pretrained"):
        content.save_pretrained(str(path))
    elif isinstance(content, str):
        atomic_write_bytes(path, content.encode("utf-8"))
    elif isinstance(content, (bytes, bytearray)):
        atomic_write_bytes(path, bytes(content))
    elif dataclasses.is_dataclass(content) and not isinstance(content, type):
        atomic_write_bytes(path, _json(dataclasses.asdict(content)))
    elif hasattr(content, "to_dict") and callable(content.to_dict):
        atomic_write_bytes(path, _json(content.to_dict()))
    elif isinstance(content, (Mapping, list, tuple, int, float, bool)) or content is None:
        atomic_write_bytes(path, _json(content))
    else:
        raise TypeError(
            f"CheckpointExtrasCallback: cannot write {type(content).__name__} to {name!r}; give a str, bytes, a "
            "JSON-able dict/list, a dataclass, an object with save_pretrained()/to_dict(), or a callable"
        )


def _json(content: Any) -> bytes:
    return json.dumps(content, indent=2, default=str).encode("utf-8")


class CheckpointExtrasCallback(TrainerCallback):
    """After each checkpoint save, write ``files`` (name → content) into the checkpoint folder.

    Replaces: ``_save_checkpoint`` overrides that add files to the checkpoint.

    Event: ``on_save``, which the Trainer fires right after ``_save_checkpoint`` returned (weights,
    optimizer, scheduler, RNG and ``trainer_state.json`` are written, old checkpoints rotated); the
    folder is ``args.output_dir/checkpoint-{state.global_step}``. Writes happen on the main process
    only (``state.is_world_process_zero``).

    Content by type: an object with ``save_pretrained`` (tokenizer, processor, config, PEFT model) →
    ``save_pretrained(folder/name)``; ``str`` → text; ``bytes`` → binary; a dict/list/number, a
    dataclass or an object with ``to_dict()`` (e.g. ``TrainingArguments``, ``GenerationConfig``) → JSON;
    a callable ``fn(checkpoint_dir, state)`` → called at each save, its return value written as above
    (return ``None`` if ``fn`` wrote the file itself).

    A file that cannot be written (full disk, unwritable folder: any ``OSError``) is a warning naming
    the file and the checkpoint that lacks it, not the end of the run; the other files are still
    written. Single files are written atomically (temporary file + ``os.replace``). To know when a
    checkpoint is finished, extras included, register :class:`CheckpointGuardCallback` after this one.
    """

    def __init__(self, files: Mapping[str, Any]) -> None:
        if not isinstance(files, Mapping) or not files:
            raise ValueError("CheckpointExtrasCallback needs a non-empty mapping of file name -> content")
        for name in files:
            parts = PurePosixPath(name).parts if isinstance(name, str) else ()
            if not parts or PurePosixPath(name).is_absolute() or ".." in parts or "\\" in name:
                raise ValueError(
                    f"CheckpointExtrasCallback: file name {name!r} must be a relative path inside the checkpoint "
                    "folder (no '..', not absolute)"
                )
        self.files = dict(files)

    def checkpoint_dir(self, args: TrainingArguments, state: TrainerState) -> Path:
        return Path(output_dir(args)) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if not state.is_world_process_zero:
            return
        folder = self.checkpoint_dir(args, state)
        if not folder.is_dir():
            raise FileNotFoundError(
                f"CheckpointExtrasCallback: expected the checkpoint folder {folder} after the save at step "
                f"{state.global_step}, but it does not exist (hyper-parameter search puts checkpoints in per-trial "
                "folders, which this callback does not support)"
            )
        for name, content in self.files.items():
            path = folder / name
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                if callable(content) and not hasattr(content, "save_pretrained"):
                    content = content(folder, state)
                    if content is None:
                        continue
                _write(path, content, name)
            except OSError as error:
                warnings.warn(
                    f"CheckpointExtrasCallback: could not write {name!r} into {folder} ({type(error).__name__}: "
                    f"{error}); this checkpoint lacks it. Training continues.",
                    stacklevel=2,
                )
