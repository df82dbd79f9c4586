"""Temporary files of killed ``fix`` runs are cleaned by the next run, and nothing else is ever removed.

The audit: 3 of 40 ``kill -9`` of ``fix`` left ``.trainwright-fix-*.tmp`` files that later runs never
removed. Here a real fix process is killed between writing its temporary file and the rename (the
original stays intact), and the next ``trainwright fix`` in that folder removes the leftover; files
that look alike but are not abandoned leftovers of ours (a running fix's, another user's, a link, a
folder, another name) are kept.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from trainwright_lint.fixes.fileio import HOST, TEMP_PREFIX

FIXTURES = Path(__file__).resolve().parents[1] / "lint" / "fixtures" / "fix"
BEFORE = (FIXTURES / "tw301_compute_loss.before.py").read_bytes()
AFTER = (FIXTURES / "tw301_compute_loss.after.py").read_bytes()

KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from trainwright_lint.fixes.fileio import read_snapshot, write_fixed

    path, data = sys.argv[1], open(sys.argv[2], "rb").read()
    # killed after the temporary file is complete, before the rename: what a kill -9 mid-save leaves
    write_fixed(read_snapshot(path), data, before_commit=lambda: os.kill(os.getpid(), signal.SIGKILL))
    """
)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX))


def fix(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "fix", "--transformers-version", "5.24.0", "-j", "1", "."],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_killed_fix_leaves_a_temporary_file_that_the_next_run_removes(tmp_path):
    target = tmp_path / "train.py"
    target.write_bytes(BEFORE)
    (tmp_path / "after.bin").write_bytes(AFTER)
    writer = [sys.executable, "-c", KILLED_WRITER, str(target), str(tmp_path / "after.bin")]
    killed = subprocess.run(writer, check=False, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    (left,) = leftovers(tmp_path)  # the real leftover, named by the real code
    assert left.startswith(f"{TEMP_PREFIX}{HOST}.") and (tmp_path / left).read_bytes() == AFTER
    assert target.read_bytes() == BEFORE  # the original was never touched

    done = fix(tmp_path)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == AFTER
    assert leftovers(tmp_path) == []


def test_only_abandoned_temporary_files_of_ours_are_removed(tmp_path):
    target = tmp_path / "train.py"
    target.write_bytes(BEFORE)
    hour_ago = os.path.getmtime(target) - 7200

    def make(name: str, old: bool = False) -> Path:
        path = tmp_path / name
        path.write_bytes(b"x")
        if old:
            os.utime(path, (hour_ago, hour_ago))
        return path

    gone = [sys.executable, "-c", "import os; print(os.getpid())"]
    dead = subprocess.run(gone, capture_output=True, text=True, check=True)
    removed = [
        make(f"{TEMP_PREFIX}{HOST}.{dead.stdout.strip()}.abcdefgh.tmp"),  # this host, its process gone
        make(f"{TEMP_PREFIX}zzzzzzzz.tmp", old=True),  # the older unnamed format, two hours old
        make(f"{TEMP_PREFIX}0badc0de.12.abcdefgh.tmp", old=True),  # another host, two hours old
    ]
    kept = [
        make(f"{TEMP_PREFIX}{HOST}.{os.getpid()}.abcdefgh.tmp"),  # a fix still running (this process)
        make(f"{TEMP_PREFIX}zzzzzzzy.tmp"),  # the older format, fresh: may be in use
        make(f"{TEMP_PREFIX}0badc0de.12.abcdefgi.tmp"),  # another host, fresh
        make(f"{TEMP_PREFIX}notes.txt", old=True),  # not our suffix
        make("trainwright-fix-x.tmp", old=True),  # not our prefix
    ]
    link = tmp_path / f"{TEMP_PREFIX}link.tmp"
    link.symlink_to(target)
    folder = tmp_path / f"{TEMP_PREFIX}folder.tmp"
    folder.mkdir()
    linked = make(f"{TEMP_PREFIX}linked.tmp", old=True)
    os.link(linked, tmp_path / "second-name-of-linked")  # someone else holds a name of it
    kept += [link, folder, linked]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        foreign = make(f"{TEMP_PREFIX}foreign.tmp", old=True)
        os.chown(foreign, 4242, 4242)  # another user's
        kept.append(foreign)

    done = fix(tmp_path)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == AFTER
    assert [p.name for p in removed if os.path.lexists(p)] == []
    assert [p.name for p in kept if not os.path.lexists(p)] == []
    assert os.readlink(link) == str(target)
