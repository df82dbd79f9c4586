"""Normalised digests of what training leaves behind: parameters and files (child side, needs torch).

Why normalise: two runs of the same program differ in timestamps, run-time speeds, the wall-clock
part of ``logging_dir`` and in the last bits of floats that a fix may reorder. Numbers are rounded to
significant digits before hashing, keys that hold wall-clock measurements are dropped, and tensor
files are read with ``weights_only=True`` (a pickle of objects only counts as present), so a digest
changes only when what was written changes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import torch

from trainwright.storage.tensor_files import UNREADABLE, load_tensor_file

# The Trainer's own wall-clock measurements only: a user's ``step_time`` (a timer the oracle's virtual
# clock makes exact) is compared, so a timer that moved to another span shows in ``log_history``.
_VOLATILE_KEY = re.compile(r"(runtime|per_second|_preparation_time|_compilation_time|logging_dir)$")
_NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def round_number(x: float, digits: int = 4) -> float:
    if not math.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")


def normalise_text(text: str) -> str:
    """Decimal numbers to 4 significant digits, memory addresses blanked."""
    text = _ADDRESS.sub("0x?", text)
    return _NUMBER.sub(lambda m: repr(round_number(float(m.group()))), text)


def plain(value: Any, digits: int = 4) -> Any:
    """``value`` as JSON data: tensors and arrays to rounded lists, wall-clock keys dropped."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.is_floating_point():
            return [round_number(float(x), digits) for x in value.flatten().tolist()]
        return value.flatten().tolist()
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return plain(value.tolist(), digits)
    if isinstance(value, dict):
        return {str(k): plain(v, digits) for k, v in value.items() if not _VOLATILE_KEY.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [plain(v, digits) for v in value]
    if isinstance(value, float):
        return round_number(value, digits)
    if isinstance(value, (int, str, bool)) or value is None:
        return value
    if hasattr(value, "to_dict"):  # TrainingArguments in training_args.bin
        return plain(value.to_dict(), digits)
    return type(value).__name__


def sha(data: Any) -> str:
    text = data if isinstance(data, str) else json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_digest(path: Path) -> str:
    """A digest of ``path``'s content that ignores what legitimately varies between runs."""
    suffix = path.suffix
    try:
        if suffix == ".json":
            return sha(plain(json.loads(path.read_text())))
        if suffix == ".safetensors":
            from safetensors.torch import load_file

            return sha(plain(dict(sorted(load_file(str(path)).items()))))
        if suffix in (".pt", ".pth", ".bin"):
            try:
                return sha(plain(load_tensor_file(path)))
            except UNREADABLE:
                # A pickle of objects (``training_args.bin``) is never unpickled: only its presence counts.
                return "pickle"
        return sha(normalise_text(path.read_text()))
    except (UnicodeDecodeError, ValueError, RuntimeError, OSError, EOFError, ImportError):
        return "raw:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def tree_digests(root: Path) -> dict[str, str]:
    """``{relative path: digest}`` of every file under ``root``."""
    return {p.relative_to(root).as_posix(): file_digest(p) for p in sorted(root.rglob("*")) if p.is_file()}


def params_digest(model: torch.nn.Module) -> tuple[str, list[float]]:
    """A hash of every parameter rounded to 6 significant digits, and each parameter's norm."""
    params = [p.detach().cpu() for p in model.parameters()]
    return sha(plain(params, digits=6)), [float(p.norm()) for p in params]
