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
import pickletools
import zipfile
from pathlib import Path
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


#: modules whose globals torch's own ``.pt`` files name (tensor rebuilders, storages, ``OrderedDict``)
_TORCH_MODULES = ("torch", "collections", "builtins", "_codecs", "numpy")
_STRINGS = {
    "SHORT_BINUNICODE",
    "BINUNICODE",
    "BINUNICODE8",
    "UNICODE",
    "SHORT_BINSTRING",
    "BINSTRING",
    "STRING",
}


def refused_global(error: BaseException, path: str | os.PathLike[str] | None = None) -> str:
    """The global (a function or class) that makes a file unsafe to unpickle, or "" when there is none.

    Running code from a pickle always goes through such a global. ``weights_only=True`` names it when it
    refuses it; a plain (non-torch) pickle is refused earlier, on an opcode, without a name, so the
    file's pickle stream at ``path`` is then read opcode by opcode (never executed) for a global outside
    the modules torch's own files use. A torn or garbage file names none.
    """
    if isinstance(error, pickle.UnpicklingError):
        reasons = [line.strip() for line in str(error).splitlines() if "GLOBAL" in line]
        if reasons:
            return reasons[0].rstrip(".")
    if path is None:
        return ""
    foreign = [name for name in pickle_globals(path) if name.split(".")[0] not in _TORCH_MODULES]
    return f"it names {foreign[0]}" if foreign else ""


def pickle_globals(path: str | os.PathLike[str]) -> list[str]:
    """``module.name`` of every global the pickle in ``path`` (a plain pickle or torch's zip) names, read
    with :mod:`pickletools` (which parses, never runs); the names read before a damaged part."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                member = next((n for n in archive.namelist() if n.endswith("data.pkl")), None)
                data = archive.read(member) if member else b""
        else:
            data = Path(path).read_bytes()
    except (OSError, zipfile.BadZipFile, RuntimeError):
        return []
    names: list[str] = []
    strings: list[str] = []  # the strings pushed so far (STACK_GLOBAL takes the last two)
    try:
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name in _STRINGS:
                strings.append(arg if isinstance(arg, str) else repr(arg))
            elif opcode.name in ("GLOBAL", "INST"):
                names.append(str(arg).replace(" ", "."))
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                names.append(f"{strings[-2]}.{strings[-1]}")
    except (ValueError, TypeError, EOFError):  # torn or not a pickle: what was read so far
        pass
    return names


def _short_reason(error: BaseException) -> str:
    """The error in one line, without torch's advice to retry with ``weights_only=False`` (which is exactly
    what must not be done with a foreign file)."""
    text = str(error)
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1]
    lines = [line.strip() for line in text.splitlines() if line.strip() and "weights_only" not in line]
    return f"{type(error).__name__}: {lines[0] if lines else type(error).__name__}"


def why_unusable(error: BaseException, size: int, path: str | os.PathLike[str] | None = None) -> str:
    """Why a file that failed to load is unusable, in words (never torch's advice to retry with
    ``weights_only=False``). With ``path``, a file that names code is told apart from a torn one even
    when it is a plain pickle that torch refuses before reaching its global."""
    foreign = refused_global(error, path)
    if foreign:
        return (
            f"holds objects other than tensors and plain data ({foreign}); it was not loaded, because "
            "unpickling it could run code (use checkpoints and caches from sources you trust only)"
        )
    return (
        f"cannot be read ({size} bytes; {_short_reason(error)}); it was probably torn by a crash "
        "while it was written, or it is not a file trainwright wrote"
    )
