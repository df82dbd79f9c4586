"""``discovery.real_paths`` (each folder resolved once) gives what ``os.path.realpath`` gives per file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from trainwright_lint.discovery import real_paths

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the fast path is POSIX only")


def test_real_paths_agree_with_realpath(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    (tmp_path / "other.py").write_text("z = 3\n")
    (tmp_path / "linked").symlink_to(tmp_path / "pkg")  # a linked folder
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "other.py")  # a linked file
    (tmp_path / "pkg" / "loop.py").symlink_to(tmp_path / "pkg" / "loop.py")  # a link that loops
    monkeypatch.chdir(tmp_path)
    paths = [
        "pkg/a.py",
        "pkg/sub/b.py",
        "linked/a.py",
        "linked/sub/b.py",
        "pkg/alias.py",
        "linked/alias.py",
        "pkg/loop.py",
        "pkg/missing.py",
        "other.py",
        "./other.py",
        "pkg/sub/../a.py",
        "linked/sub/..",
        "pkg/",
        str(tmp_path / "linked" / "a.py"),
    ]
    assert real_paths(paths) == [os.path.realpath(p) for p in paths]
    assert real_paths(paths)[2] == str(tmp_path.resolve() / "pkg" / "a.py")
