"""The ``.pt`` files trainwright writes into checkpoints and caches: written atomically, read trusting
no pickle.

Why: a checkpoint folder may come from someone else (a shared disk, a download, a colleague's run),
and a ``.pt`` file is a pickle. Unpickling runs whatever the pickle names: a ``__reduce__`` returning
``(os.system, ("...",))`` runs a shell command the moment the file is loaded, before any check of the
result could happen. ``torch.load(weights_only=True)`` unpickles tensors, numbers, strings and plain
containers only and refuses any other global, which is all our files hold (the GRPO generation
buffer, the TR-DPO reference, the DPO reference log-prob cache). It is passed explicitly: the default
changed across torch releases and ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` flips the default, not an
explicit argument. The Trainer's own files (``optimizer.pt``, ``scheduler.pt``, ``rng_state*.pth``)
are read with ``weights_only=True`` by transformers itself.

Writing goes through :func:`~trainwright.storage.atomic.atomic_write`: a ``kill -9`` in the middle of a
``torch.save`` leaves the previous file (or none), never a truncated one.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

import torch

from trainwright.storage.atomic import atomic_write

#: what ``torch.load`` raises on an empty, truncated, foreign or refused file (EOFError: empty;
#: RuntimeError: a zip archive without its central directory; UnpicklingError: garbage, or a global
#: ``weights_only`` refused), and what a wrong structure raises when it is checked
UNREADABLE = (
    EOFError,
    OSError,
    RuntimeError,
    pickle.UnpicklingError,
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    ImportError,
)


def save_tensor_file(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save(obj)`` to ``path`` atomically and durably (see the module docstring)."""
    atomic_write(path, lambda handle: torch.save(obj, handle))


def load_tensor_file(path: str | os.PathLike[str]) -> Any:
    """``torch.load`` of ``path`` onto the CPU with tensors and plain data only (never runs code)."""
    return torch.load(path, map_location="cpu", weights_only=True)


def refused_global(error: BaseException) -> str:
    """The global (a function or class) that ``weights_only=True`` refused to unpickle, or "" when
    ``error`` is another one. Running code from a pickle always goes through such a global; a torn or
    garbage file fails on other grounds ("Unsupported operand ...")."""
    if not isinstance(error, pickle.UnpicklingError):
        return ""
    reasons = [line.strip() for line in str(error).splitlines() if "GLOBAL" in line]
    return reasons[0].rstrip(".") if reasons else ""


def why_unusable(error: BaseException, size: int) -> str:
    """Why a file that failed to load is unusable, in words (without torch's advice to retry with
    ``weights_only=False``, which is exactly what must not be done with a foreign file)."""
    foreign = refused_global(error)
    if foreign:
        return (
            f"holds objects other than tensors and plain data ({foreign}); it was not loaded, because "
            "unpickling it could run code (use checkpoints and caches from sources you trust only)"
        )
    return (
        f"cannot be read ({size} bytes; {type(error).__name__}: {error}); it was probably torn by a crash "
        "while it was written"
    )
