"""Crash-safe file writes: the one atomic replace used by every file trainwright writes.

Why: a ``kill -9``, an OOM kill or a preemption can stop a process in the middle of any write. A file
that is *replaced* (a marker, a rewritten JSONL file) must then be either the old or the new version,
never a mix, so it is written to a temporary file in the same folder, flushed to disk and renamed over
the old one (``os.replace`` is atomic on POSIX and Windows when both paths are on one filesystem).
A file that is *appended to* (a JSONL log) can end in a torn line; an append that fails half-way (full
disk) is rolled back so the next one does not glue its record onto a fragment.

Durability is always the strongest (the file's data and the folder's entry are both fsynced): the
files written here are markers, checkpoint state and caches, a few per save, where a lost rename after
a power cut would cost a resume its exactness. Standard library only, so it loads without torch.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_CHUNK = 64 * 1024


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a directory's entries (a rename or a new file in it) to disk; a no-op where unsupported.

    Without this a rename can be lost on power failure even though the renamed file's data was
    fsynced. Windows cannot open directories, and some network filesystems refuse ``fsync`` on them:
    both are ignored, the data itself is already flushed.
    """
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: str | os.PathLike[str]) -> None:
    """Flush one already-written file's data to disk (files written by someone else, e.g. the Trainer)."""
    fd = os.open(os.fspath(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _create_temp(folder: str | os.PathLike[str], name: str) -> tuple[int, str]:
    """A new file ``.<name>.<pid>.<random>.tmp`` in ``folder``, created with the usual 0o666-minus-umask
    permissions (``tempfile.mkstemp`` would make it 0o600, and the final file with it)."""
    while True:
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(handle)`` to fill a new version of ``path``, so that a crash leaves either the old
    file or the new one, never a mix.

    The temporary file lives in the destination folder (a rename across filesystems is not atomic),
    starts with ``.`` and ends in ``.tmp`` so that it never matches a name a reader looks for, and is
    removed if the write fails. The data is fsynced before the rename and the folder after it. A file
    that is replaced keeps its permission bits.
    """
    path = Path(path)
    fd, tmp = _create_temp(path.parent, path.name)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """:func:`atomic_write` of ``data``."""
    atomic_write(path, lambda handle: handle.write(data))


def append_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Append ``data`` (whole lines) to ``path``; if the write fails part-way, cut the file back.

    A full disk makes ``write`` store part of the buffer and then fail. Cutting the file back to its
    previous length (which frees space, so it works on a full disk) keeps the file a sequence of whole
    lines. If even that fails the fragment stays; :func:`drop_torn_tail` removes it before the next
    append. The write goes straight to the file descriptor (no Python buffer that would retry the
    failed write when the file is closed).
    """
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def drop_torn_tail(path: str | os.PathLike[str]) -> bytes | None:
    """Cut an unterminated last line (a write a crash interrupted) off ``path``; return the fragment.

    Only regular files are touched (``/dev/full`` or a FIFO given as a log path is left alone). Returns
    ``None`` when the file ends with a newline, is empty or is not a regular file.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        return None
    with open(path, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return None
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return None
        # walk back to the last newline
        end = size
        cut = 0
        while end > 0:
            begin = max(0, end - _CHUNK)
            handle.seek(begin)
            block = handle.read(end - begin)
            index = block.rfind(b"\n")
            if index >= 0:
                cut = begin + index + 1
                break
            end = begin
        handle.seek(cut)
        fragment = handle.read(size - cut)
        handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
    return fragment
