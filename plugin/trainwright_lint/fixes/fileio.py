"""Reading and writing source files for the fixer without changing what we did not fix.

libcst parses bytes: it honours the PEP 263 coding line and a UTF-8 BOM, remembers the newline style
(``\\n``, ``\\r\\n``, ``\\r``) and re-encodes ``Module.bytes`` the same way, so a fixed file keeps its
encoding and line endings. Writes are atomic: a temporary file in the same directory, fsynced, then
``os.replace`` (a crash leaves either the old file or the new one, never half of each), keeping the
original's permission bits.
"""

from __future__ import annotations

import os
import stat
import tempfile


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=".trainwright-fix-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
