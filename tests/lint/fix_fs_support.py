"""Shared helpers for the ``test_fix_fs_*`` tests: a fixable file, the CLI run in-process, real
file-system setups (tmpfs, immutable folders) that clean up after themselves."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from trainwright_lint.cli import main

FIX_FIXTURES = Path(__file__).parent / "fixtures" / "fix"
BEFORE = (FIX_FIXTURES / "tw301_compute_loss.before.py").read_bytes()
AFTER = (FIX_FIXTURES / "tw301_compute_loss.after.py").read_bytes()
TARGET = "5.24.0"


def run_fix(paths: list[str], capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    """``trainwright fix`` through the real CLI entry point (in-process: the catalogue loads once)."""
    status = main(["fix", "--transformers-version", TARGET, "-j", "1", *extra, *paths])
    out, err = capsys.readouterr()
    return status, out, err


def temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(".trainwright-fix-")]


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "64k") -> Iterator[Path]:
    """A real small tmpfs mounted on ``where`` (root only; the test is skipped when mount fails)."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> None:
    """Fill the file system holding ``folder`` until the OS says ENOSPC (a real full disk)."""
    with open(folder / "filler.bin", "wb", buffering=0) as fh:
        chunk = b"\0" * 4096
        try:
            while True:
                fh.write(chunk)
        except OSError as exc:
            assert exc.errno == 28, exc  # ENOSPC
    with open(folder / "filler.bin", "ab", buffering=0) as fh:  # and the last partial page
        try:
            while True:
                fh.write(b"\0")
        except OSError:
            pass


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[None]:
    """Make ``folder`` refuse new entries for the user running the tests.

    chmod 0555 stops an ordinary user; root ignores permission bits, so as root the folder is made
    immutable (``chattr +i``: even root cannot create files in it). Skipped when neither works."""
    if not is_root():
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    done = subprocess.run(["chattr", "+i", str(folder)], check=False, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot make a folder read-only for root here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=False)
