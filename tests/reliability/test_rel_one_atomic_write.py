"""One crash-safe write for every file trainwright replaces: ``storage.atomic.atomic_write``.

There used to be four (callbacks, the GRPO buffer, the TR-DPO reference, the DPO reference cache), with
different durability: the cache was renamed without any fsync, the TR-DPO file without the folder's.
Here: the helper flushes the file's data before the rename and the folder's entry after it, and no
other module of the library renames files over others or calls ``torch.save`` itself.
"""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from trainwright.storage.atomic import atomic_write_bytes
from trainwright.storage.tensor_files import load_tensor_file, save_tensor_file

SRC = Path(__file__).resolve().parents[2] / "src" / "trainwright"


def _record_fsyncs(monkeypatch) -> list[str]:
    """Let ``os.fsync`` run, noting whether each call flushed a file or a folder (and which)."""
    seen: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        seen.append(kind)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def test_a_tensor_file_is_flushed_then_renamed_then_its_folder_flushed(tmp_path, monkeypatch):
    path = tmp_path / "state.pt"
    path.write_bytes(b"old")
    seen = _record_fsyncs(monkeypatch)
    save_tensor_file({"x": torch.arange(3)}, path)
    assert seen == ["file", "dir"]
    assert torch.equal(load_tensor_file(path)["x"], torch.arange(3))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.pt"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "state.pt"
    atomic_write_bytes(path, b"old")

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("cannot pickle")

    with pytest.raises(RuntimeError, match="cannot pickle"):
        save_tensor_file({"bad": Unpicklable()}, path)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.pt"]


def test_no_module_writes_a_file_over_another_outside_the_helper():
    """``os.replace`` / ``os.rename`` and ``torch.save`` are called in ``storage/`` only (the checkpoint
    guard's ``os.replace`` renames a torn checkpoint *folder* aside, not a file)."""
    calls = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
                called = f"{owner}.{node.func.attr}"
                if called in ("os.replace", "os.rename", "torch.save", "shutil.move"):
                    calls.append(f"{path.relative_to(SRC).as_posix()}: {called}")
    assert sorted(calls) == [
        "callbacks/checkpoint_guard.py: os.replace",
        "storage/atomic.py: os.replace",
        "storage/tensor_files.py: torch.save",
    ], calls
