"""``trainwright fix`` against a real file system: read-only files and folders, a full disk,
symlinks, hard links, owner, mode and extended attributes, and an edit made while fixing.

Each case is a real file-system state (chmod, chattr, a mounted 64 KiB tmpfs filled to ENOSPC, real
links) and goes through the real CLI; nothing is monkeypatched. A failing file is reported with its
path and the OS error, the run goes on with the next file, the exit status is 2, and no temporary
file is left behind.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from fix_fs_support import AFTER, BEFORE, fill, is_root, read_only_folder, run_fix, temp_files, tmpfs
from trainwright_lint.fixes.fileio import CHANGED, WriteRefused, read_snapshot, write_fixed


def make(path: Path, data: bytes = BEFORE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_read_only_file_is_refused_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = make(tmp_path / "a_locked.py")
    locked.chmod(0o444)
    other = make(tmp_path / "b_other.py")
    status, _out, err = run_fix([str(tmp_path)], capsys)
    assert status == 2
    assert locked.read_bytes() == BEFORE  # refused even as root, who could replace it
    assert f"{locked}: read-only (mode 0444); not written" in err
    assert "chmod u+w" in err
    assert other.read_bytes() == AFTER  # the next file was still fixed
    assert "Traceback" not in err
    assert not temp_files(tmp_path)


def test_read_only_folder_is_reported_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "a_frozen"
    locked = make(folder / "train.py")
    other = make(tmp_path / "b_open" / "train.py")
    with read_only_folder(folder):
        status, _out, err = run_fix([str(tmp_path)], capsys)
        assert not temp_files(folder)
    assert status == 2
    assert locked.read_bytes() == BEFORE
    assert f"{locked}: cannot create a temporary file in {folder}:" in err
    assert "the file is unchanged" in err
    assert other.read_bytes() == AFTER
    assert "Traceback" not in err


@pytest.mark.skipif(not is_root(), reason="mounting a tmpfs needs root")
def test_full_disk_is_reported_and_leaves_no_temp_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with tmpfs(tmp_path / "a_full") as full:
        single = make(full / "single.py")
        # Written in place (two names). A page-sized file, so that the longer fixed content needs a
        # new block: growth within an allocated page would rightly succeed on a full disk.
        page = BEFORE + b"#" * (4096 - len(BEFORE) - 1) + b"\n"
        linked = make(full / "linked.py", page)
        os.link(linked, full / "linked_twin.py")
        fill(full)
        other = make(tmp_path / "b_roomy" / "train.py")
        status, _out, err = run_fix([str(full / "single.py"), str(linked), str(other)], capsys)
        assert status == 2
        assert single.read_bytes() == BEFORE
        assert linked.read_bytes() == page  # nothing overwritten: the growth was reserved first
        assert f"{single}: cannot write the temporary file" in err
        assert f"{linked}: cannot reserve space for the longer content: No space left on device" in err
        assert "No space left on device (errno 28); the file is unchanged" in err
        assert not temp_files(full)
        assert other.read_bytes() == AFTER
        assert "Traceback" not in err


def test_symlink_target_inside_the_project_is_fixed_and_the_link_stays_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    target = make(project / "shared" / "trainer_impl.py")
    link = project / "train.py"
    link.symlink_to(os.path.relpath(target, project))
    status, _out, err = run_fix([str(project)], capsys)
    assert status == 0, err
    assert link.is_symlink()
    assert os.readlink(link) == os.path.relpath(target, project)
    assert target.read_bytes() == AFTER
    assert not temp_files(target.parent) and not temp_files(project)


@pytest.mark.parametrize("named", ["folder", "link", "link-from-inside"])
def test_symlink_leading_out_of_the_project_is_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """The audit's attack: a ``.py`` inside the project that links to a file outside it (here another
    project's file; it could be ``~/.bashrc``). Whether fix is given the folder, the link itself, or
    runs inside the project on the link's name, the target is untouched and the refusal says why."""
    outside = make(tmp_path / "other_project" / "trainer_impl.py")
    project = tmp_path / "project"
    (project / "pyproject.toml").parent.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "p"\n')
    link = project / "train.py"
    link.symlink_to(os.path.relpath(outside, project))
    inside = make(project / "b_inside.py")  # the run goes on with the project's own files
    if named == "link-from-inside":
        monkeypatch.chdir(project)
    paths = {"folder": [str(project)], "link": [str(link), str(inside)], "link-from-inside": ["."]}[named]
    status, _out, err = run_fix(paths, capsys)
    assert status == 2
    assert outside.read_bytes() == BEFORE
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(outside, project)
    assert inside.read_bytes() == AFTER
    assert f"resolves through a symbolic link to {outside}, outside the project {project}; not written" in err
    assert "Traceback" not in err
    assert not temp_files(outside.parent) and not temp_files(project)


def test_link_retargeted_while_fixing_is_refused(tmp_path: Path) -> None:
    first = make(tmp_path / "first.py")
    second = make(tmp_path / "second.py")
    link = tmp_path / "train.py"
    link.symlink_to("first.py")
    snapshot = read_snapshot(str(link), root=tmp_path)

    def retarget() -> None:
        link.unlink()
        link.symlink_to("second.py")

    retarget()
    with pytest.raises(WriteRefused, match=CHANGED):
        write_fixed(snapshot, AFTER)
    assert first.read_bytes() == second.read_bytes() == BEFORE


def test_hard_links_keep_sharing_one_fixed_inode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = make(tmp_path / "project" / "train.py")
    second = tmp_path / "backup" / "train.py"
    second.parent.mkdir()
    os.link(first, second)
    inode = first.stat().st_ino
    status, _out, err = run_fix([str(tmp_path / "project")], capsys)
    assert status == 0, err
    assert first.read_bytes() == second.read_bytes() == AFTER
    assert first.stat().st_ino == second.stat().st_ino == inode
    assert first.stat().st_nlink == 2


@pytest.mark.skipif(not is_root(), reason="giving a file to another user needs root")
def test_owner_group_and_mode_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make(tmp_path / "train.py")
    os.chown(path, 4242, 4343)
    path.chmod(0o640)
    status, _out, err = run_fix([str(path)], capsys)
    assert status == 0, err
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4242, 4343, 0o640)
    assert path.read_bytes() == AFTER


def test_extended_attributes_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make(tmp_path / "train.py")
    try:
        os.setxattr(path, "user.trainwright.origin", b"kept")
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            pytest.skip(f"no user.* extended attributes on this file system: {exc}")
        raise
    status, _out, err = run_fix([str(path)], capsys)
    assert status == 0, err
    assert path.read_bytes() == AFTER
    assert os.getxattr(path, "user.trainwright.origin") == b"kept"


# --------------------------------------------------------------- an edit made while fixing
#
# The window between the last check and the rename is microseconds long, so a concurrent edit cannot
# be made to land in it by timing without a flaky test. ``write_fixed`` takes a ``before_commit``
# callback that runs once the new content is fully prepared (temporary file written and fsynced),
# right before the unchanged-check: the callback starts a separate process that edits the file
# through the OS, a real concurrent writer, and the production check must catch it.

EDIT = [sys.executable, "-c", "import sys; open(sys.argv[1], 'ab').write(b'# edited meanwhile\\n')"]


def _edit_in_another_process(path: Path) -> None:
    subprocess.run([*EDIT, str(path)], check=True)


@pytest.mark.parametrize("hard_linked", [False, True], ids=["replace", "in-place"])
def test_edit_between_read_and_write_is_not_lost(tmp_path: Path, hard_linked: bool) -> None:
    path = make(tmp_path / "train.py")
    if hard_linked:
        os.link(path, tmp_path / "twin.py")
    snapshot = read_snapshot(str(path))
    with pytest.raises(WriteRefused) as caught:
        write_fixed(snapshot, AFTER, before_commit=lambda: _edit_in_another_process(path))
    assert str(caught.value) == f"{path}: {CHANGED}"
    assert path.read_bytes() == BEFORE + b"# edited meanwhile\n"  # the edit survives, nothing else
    assert not temp_files(tmp_path)


def test_same_size_same_mtime_edit_is_caught_by_the_digest(tmp_path: Path) -> None:
    """An editor can write the same number of bytes within the file system's timestamp granularity:
    size and mtime agree, only the content hash tells."""
    path = make(tmp_path / "train.py")
    snapshot = read_snapshot(str(path))

    def same_size_edit() -> None:
        st = path.stat()
        with open(path, "r+b") as fh:
            fh.write(b"#")  # the first byte of the file is already '#': make it differ
            fh.seek(1)
            fh.write(b"!")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    with pytest.raises(WriteRefused, match="changed while fixing"):
        write_fixed(snapshot, AFTER, before_commit=same_size_edit)
    assert path.stat().st_size == len(BEFORE)
    assert path.read_bytes()[:2] == b"#!"
    assert not temp_files(tmp_path)


def test_unchanged_file_is_written(tmp_path: Path) -> None:
    path = make(tmp_path / "train.py")
    write_fixed(read_snapshot(str(path)), AFTER, before_commit=lambda: None)
    assert path.read_bytes() == AFTER
    assert not temp_files(tmp_path)
