"""Reading and writing source files for the fixer without changing what we did not fix.

The read snapshot travels with the content: ``read_snapshot`` returns the bytes together with the
file's identity and state (device, inode, size, mtime_ns, a BLAKE2 digest) and ``write_fixed`` writes
new bytes only if the file is still in that state, so an edit made while ``fix`` runs is never lost
silently: the file is skipped and reported ("changed while fixing; not written — run fix again").

How a file is written, and why:

* A symlink is resolved when read and its *target* is written; the link stays a link. Only inside the
  project: when the target, or the link itself, lies outside the project root the run works on, the file
  is refused before anything is fixed ("outside the project ...; not written"). A link that leads out of
  the tree is not a file the user gave ``fix``: following it rewrote a file of another project (or
  ``/etc``) that the run was never pointed at. The path is resolved again just before writing, so a
  link retargeted while fixing is refused as changed. (A hard link has no "outside": it *is* the file,
  and is rewritten in place, see below.)
* A file with one name: the new content goes to a temporary file in the same folder (same file
  system, so ``os.replace`` is an atomic rename: a crash leaves the old file or the new one, never half
  of each), which gets the original's mode, owner and group (``os.fchown``; when that is not permitted,
  as for an unprivileged user with a file owned by someone else, the owner is left and the mode still
  copied) and extended attributes (``user.*``, ACLs, ... as far as the OS lets us), and is fsynced
  before the rename. The folder is fsynced after it, so the rename itself is durable.
* A file with more than one hard link (``st_nlink > 1``) is rewritten in place (``r+b``: write,
  truncate, fsync) so that every name keeps seeing one inode; a rename would split them. The growth,
  if any, is reserved first with ``posix_fallocate`` so that a full disk fails before the first byte
  is overwritten. An in-place write is not atomic: a crash in the middle of it can leave a mix.
* A read-only file (no write bit, e.g. mode 0444, or not writable by this user) is refused, as ruff
  does: replacing it would succeed (a rename needs only the folder to be writable) and silently
  defeat the protection.

Every failure is raised as a ``WriteError`` naming the path, what was being done and the OS error,
and leaves the original file as it was (the temporary file is always removed).

A ``kill -9`` between creating the temporary file and the rename leaves it behind (the original is
intact). Temporary files are named ``.trainwright-fix-<host>.<pid>.<random>.tmp``, and the first write
into a folder removes the stale ones there (:func:`remove_stale_temp_files`): only regular files of
that exact shape, owned by this user and with no other link, whose process is gone (same host) or
that are over an hour old (another host, or the older unnamed format). A temporary file of a fix that
is still running is never one of them.

Race window, honestly: the file is re-opened, re-stat'ed and re-hashed immediately before the rename
(or, in place, through the very descriptor that is then written). An edit that lands between that
check and ``os.replace`` (microseconds, plus the time to hash the file) is still lost, and so is a
write by a program that keeps the old file open and writes to it after the rename. Preventing those
needs cooperation (locks) that editors do not offer.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from trainwright_lint.discovery import find_project_root

TEMP_PREFIX = ".trainwright-fix-"
TEMP_SUFFIX = ".tmp"
#: this machine, as it appears in our temporary files' names (a pid means something on one host only)
HOST = hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()
#: a temporary file this old is abandoned whoever made it (a write takes milliseconds)
STALE_AFTER = 3600.0
_swept: set[str] = set()  # folders this process has already cleaned


class WriteError(OSError):
    """A fixed file was not written. ``str()`` is the whole message: path, reason, what to do.

    Subclasses ``OSError`` so callers that catch file-system errors catch it too; ``errno`` is the
    underlying OS error's when there is one."""

    def __init__(self, path: str, reason: str, err: int | None = None) -> None:
        super().__init__(err, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class WriteRefused(WriteError):
    """The fixer chose not to write: the file is read-only or changed since it was read."""


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes as read, with what identifies that state of the file."""

    path: str  # as named by the user (messages)
    real_path: str  # symlinks resolved: the file that is read and written
    root: str | None  # the project root writes must stay inside (real path), or None: anywhere
    data: bytes
    dev: int
    ino: int
    size: int
    mtime_ns: int
    mode: int
    uid: int
    gid: int
    nlink: int
    digest: bytes = field(repr=False)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32).digest()


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def read_snapshot(path: str, root: str | os.PathLike[str] | None = None) -> Snapshot:
    """Read ``path`` (following symlinks) and record its state; ``fstat`` on the descriptor that was
    read, so the state and the bytes belong together. Raises ``OSError`` as ``open`` does, and
    ``WriteRefused`` when ``root`` is given and the file (or the link naming it) lies outside it."""
    real = os.path.realpath(path)
    real_root = os.path.realpath(root) if root is not None else None
    if real_root is not None:
        _refuse_outside(path, real, real_root)
    with open(real, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    return Snapshot(
        path=path,
        real_path=real,
        root=real_root,
        data=data,
        dev=st.st_dev,
        ino=st.st_ino,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        mode=st.st_mode,
        uid=st.st_uid,
        gid=st.st_gid,
        nlink=st.st_nlink,
        digest=_digest(data),
    )


def _os_reason(doing: str, exc: OSError, unchanged: bool = True) -> str:
    after = "the file is unchanged" if unchanged else "the file may be partly written: check it"
    return f"cannot {doing}: {exc.strerror or exc} (errno {exc.errno}); {after}"


def _unchanged(snapshot: Snapshot, st: os.stat_result, data: bytes) -> bool:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (
        snapshot.dev,
        snapshot.ino,
        snapshot.size,
        snapshot.mtime_ns,
    ) and _digest(data) == snapshot.digest


CHANGED = "changed while fixing; not written — run fix again"


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _refuse_outside(path: str, real: str, root: str) -> None:
    """Refuse a file whose real location, or the name it was given by, is outside ``root`` (a real
    path) or outside the project that name lives in (its nearest ``pyproject.toml``, ``.git``, ...).
    The name's own project counts because the run's root may come from where a link named on the
    command line leads (``fix project/link.py`` starts its search there)."""
    named = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
    home = find_project_root(Path(os.path.dirname(named)))
    for limit in [root, *([os.path.realpath(home)] if home is not None else [])]:
        if _inside(real, limit) and _inside(named, limit):
            continue
        via = f"resolves through a symbolic link to {real}, " if real != named else ""
        raise WriteRefused(
            path,
            f"{via}outside the project {limit}; not written — fix never writes outside the project it runs "
            "on (fix that file from its own project, or replace the link with a copy)",
        )


def _refuse_read_only(snapshot: Snapshot, st: os.stat_result) -> None:
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteRefused(
            snapshot.path,
            f"read-only (mode {stat.S_IMODE(st.st_mode):04o}); not written — make it writable "
            "(chmod u+w) to let fix change it",
        )
    if not os.access(snapshot.real_path, os.W_OK):
        raise WriteRefused(snapshot.path, "not writable by this user; not written")


def _copy_metadata(fd: int, tmp: str, snapshot: Snapshot) -> None:
    """Owner, group, mode and extended attributes of the original onto the temporary file."""
    if hasattr(os, "fchown"):  # POSIX only
        try:
            os.fchown(fd, snapshot.uid, snapshot.gid)
        except PermissionError:
            try:  # an unprivileged user may still give the file its group when a member of it
                os.fchown(fd, -1, snapshot.gid)
            except PermissionError:
                pass
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(snapshot.mode))  # after chown, which may clear setuid/setgid bits
    else:  # pragma: no cover - Windows before Python 3.13
        os.chmod(tmp, stat.S_IMODE(snapshot.mode))
    for name in _xattr_names(snapshot.real_path):
        try:
            os.setxattr(fd, name, os.getxattr(snapshot.real_path, name))
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise
            # EPERM/ENOTSUP/EACCES: trusted.*, security.* or a file system without xattrs -- skipped


def _xattr_names(path: str) -> list[str]:
    if not hasattr(os, "listxattr"):
        return []
    try:
        return os.listxattr(path)
    except OSError:
        return []


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on folders; the rename has happened either way
    finally:
        os.close(fd)


def write_fixed(snapshot: Snapshot, data: bytes, *, before_commit: Callable[[], None] | None = None) -> None:
    """Write ``data`` as the new content of the file ``snapshot`` was read from.

    Raises ``WriteRefused`` (read-only, or changed since the snapshot) or ``WriteError`` (the OS said
    no: permission, full disk, ...); in both cases the file is as it was and no temporary file is left.

    ``before_commit`` runs after the new content is fully prepared and just before the final
    unchanged-check: tests use it to edit the file inside that window deterministically."""
    if os.path.realpath(snapshot.path) != snapshot.real_path:  # a link retargeted since the read
        raise WriteRefused(snapshot.path, CHANGED)
    if snapshot.root is not None:
        _refuse_outside(snapshot.path, snapshot.real_path, snapshot.root)
    try:
        st = os.stat(snapshot.real_path)
    except FileNotFoundError:
        raise WriteRefused(snapshot.path, "deleted while fixing; not written") from None
    except OSError as exc:
        raise WriteError(snapshot.path, _os_reason("stat it before writing", exc), exc.errno) from None
    _refuse_read_only(snapshot, st)
    if st.st_nlink > 1:
        _write_in_place(snapshot, data, before_commit)
    else:
        _write_replacing(snapshot, data, before_commit)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, as another user's process
        return True
    return True


def _abandoned(name: str, st: os.stat_result, now: float) -> bool:
    """Whether our temporary file ``name`` (already checked to be ours) belongs to no running fix."""
    if now - st.st_mtime > STALE_AFTER:
        return True
    host, _, rest = name[len(TEMP_PREFIX) : -len(TEMP_SUFFIX)].partition(".")
    pid, _, _ = rest.partition(".")
    return host == HOST and pid.isdigit() and not _pid_alive(int(pid))


def remove_stale_temp_files(directory: str) -> list[str]:
    """Remove the temporary files killed fix runs left in ``directory``; the paths removed.

    Only ours: a name ``.trainwright-fix-*.tmp``, a regular file (never a link or a folder) owned by
    this user with a single link; only abandoned ones (see the module doc). Errors are ignored: a file
    that cannot be listed or removed stays, and the fix goes on."""
    removed: list[str] = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not (entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(TEMP_SUFFIX)):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            mine = stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_uid == os.geteuid()
            if mine and _abandoned(entry.name, st, now):
                os.unlink(entry.path)
                removed.append(entry.path)
        except OSError:
            continue
    return removed


def _write_replacing(snapshot: Snapshot, data: bytes, before_commit: Callable[[], None] | None) -> None:
    directory = os.path.dirname(snapshot.real_path)
    if directory not in _swept:
        _swept.add(directory)
        remove_stale_temp_files(directory)
    try:
        prefix = f"{TEMP_PREFIX}{HOST}.{os.getpid()}."  # whose it is: see remove_stale_temp_files
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=TEMP_SUFFIX, dir=directory)
    except OSError as exc:
        raise WriteError(
            snapshot.path, _os_reason(f"create a temporary file in {directory}", exc), exc.errno
        ) from None
    try:
        doing = f"write the temporary file {tmp}"
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                doing = "copy owner, mode and extended attributes"
                _copy_metadata(fh.fileno(), tmp, snapshot)
                doing = f"fsync the temporary file {tmp}"
                os.fsync(fh.fileno())
        except OSError as exc:
            raise WriteError(snapshot.path, _os_reason(doing, exc), exc.errno) from None
        if before_commit is not None:
            before_commit()
        _check_unchanged(snapshot)
        try:
            os.replace(tmp, snapshot.real_path)
        except OSError as exc:
            raise WriteError(snapshot.path, _os_reason("replace it", exc), exc.errno) from None
        tmp = ""
        _fsync_dir(directory)
    finally:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass  # never hide the error that got us here


def _check_unchanged(snapshot: Snapshot) -> None:
    try:
        with open(snapshot.real_path, "rb") as fh:
            st = os.fstat(fh.fileno())
            current = fh.read()
    except FileNotFoundError:
        raise WriteRefused(snapshot.path, "deleted while fixing; not written") from None
    except OSError as exc:
        raise WriteError(snapshot.path, _os_reason("re-read it before writing", exc), exc.errno) from None
    if not _unchanged(snapshot, st, current):
        raise WriteRefused(snapshot.path, CHANGED)


def _write_in_place(snapshot: Snapshot, data: bytes, before_commit: Callable[[], None] | None) -> None:
    """Overwrite the inode itself (all hard links see it), checking it through the same descriptor."""
    doing = "open it for writing"
    try:
        with open(snapshot.real_path, "r+b") as fh:
            fd = fh.fileno()
            if before_commit is not None:
                before_commit()
            current = fh.read()
            if not _unchanged(snapshot, os.fstat(fd), current):
                raise WriteRefused(snapshot.path, CHANGED)
            if len(data) > len(current):
                doing = "reserve space for the longer content"
                _reserve(fd, len(current), len(data) - len(current))
            doing = "write it in place (it has other hard links)"
            fh.seek(0)
            fh.write(data)
            fh.truncate(len(data))
            fh.flush()
            doing = "fsync it"
            os.fsync(fd)
    except WriteError:
        raise
    except OSError as exc:
        overwriting = doing.startswith(("write it in place", "fsync"))
        raise WriteError(
            snapshot.path, _os_reason(doing, exc, unchanged=not overwriting), exc.errno
        ) from None


def _reserve(fd: int, offset: int, length: int) -> None:
    """Allocate the bytes a longer content needs before overwriting anything (full disk: nothing
    written). File systems without ``fallocate`` go ahead unreserved."""
    if not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, offset, length)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            return
        try:
            os.ftruncate(fd, offset)  # undo a partial extension; the content up to ``offset`` is intact
        except OSError:
            pass
        raise
