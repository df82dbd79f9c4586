"""Issue 38 items 5, 6 and 15: hostile project layouts and configurations end in a message, never a
traceback, and the rest of the project is still linted.

Each case is a real project on disk run through the real ``trainwright`` CLI (``lint`` and ``fix``)
and, where the input reaches it, flake8's plugin, in fresh processes. Before the fixes every one of
them ended in a traceback (exit 1, which CI reads as "findings"), and flake8 exited 0 with nothing
linted on the deep ``pyproject.toml`` and ``setup.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TRAINER = """\
from transformers import Trainer


class T(Trainer):
    def log_size(self):
        return len(self.tokenizer)
"""
PYPROJECT = '[project]\nname = "p"\ndependencies = ["transformers==5.24.0"]\n'
TRAINWRIGHT = [sys.executable, "-m", "trainwright_lint"]
FLAKE8 = [sys.executable, "-m", "flake8", "--select", "TW", "."]


def _project(root: Path, pyproject: str = PYPROJECT) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(pyproject)
    (root / "train.py").write_text(TRAINER)
    return root


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=300, env=os.environ, check=False
    )


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    assert "internal error" not in done.stderr, done.stderr[-3000:]


# --------------------------------------------------------------------------- item 5: looping links


def _looping_links(root: Path) -> Path:
    _project(root)
    (root / "self.py").symlink_to("self.py")  # a link to itself
    (root / "sub").mkdir()
    (root / "sub" / "a.py").symlink_to("../b.py")  # a two-link cycle
    (root / "b.py").symlink_to("sub/a.py")
    return root


def test_looping_symlink_is_reported_and_the_rest_is_linted(tmp_path: Path) -> None:
    root = _looping_links(tmp_path / "p")
    lint = _run([*TRAINWRIGHT, "lint", "."], root)
    _clean(lint)
    assert lint.returncode == 1
    assert "train.py:6:20: TW303" in lint.stdout
    for name in ("self.py", "b.py", "sub/a.py"):
        assert f"{name}:1:1: TW000" in lint.stdout, lint.stdout
    assert "symbolic links" in lint.stdout


def test_fix_goes_past_a_looping_symlink(tmp_path: Path) -> None:
    root = _looping_links(tmp_path / "p")
    fix = _run([*TRAINWRIGHT, "fix", "."], root)
    _clean(fix)
    assert "self.processing_class" in (root / "train.py").read_text()
    assert fix.returncode == 1  # the looping links remain as TW000
    assert os.readlink(root / "self.py") == "self.py"


def test_looping_symlink_named_on_the_command_line_is_a_message(tmp_path: Path) -> None:
    root = _looping_links(tmp_path / "p")
    lint = _run([*TRAINWRIGHT, "lint", "self.py", "train.py"], root)
    _clean(lint)
    assert "self.py:1:1: TW000" in lint.stdout
    assert "train.py:6:20: TW303" in lint.stdout


# --------------------------------------------------------------------------- item 6: configurations


@pytest.mark.parametrize("value", ["1e10", "nan", "inf"])
def test_file_timeout_out_of_range_is_a_configuration_error(tmp_path: Path, value: str) -> None:
    root = _project(tmp_path / "p", PYPROJECT + f"[tool.trainwright]\nfile-timeout = {value}\n")
    lint = _run([*TRAINWRIGHT, "lint", "."], root)
    _clean(lint)
    assert lint.returncode == 2
    assert "file-timeout must be a number of seconds from 0" in lint.stderr


def test_file_timeout_option_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    lint = _run([*TRAINWRIGHT, "lint", "--file-timeout", "1e10", "."], root)
    _clean(lint)
    assert lint.returncode == 2
    assert "file-timeout must be a number of seconds from 0" in lint.stderr


def test_invalid_exclude_range_names_the_pattern(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", PYPROJECT + '[tool.trainwright]\nexclude = ["[z-a]"]\n')
    lint = _run([*TRAINWRIGHT, "lint", "."], root)
    _clean(lint)
    assert lint.returncode == 2
    assert 'exclude "[z-a]"' in lint.stderr


@pytest.mark.parametrize("line", ["[z-a]", "foo\\", "[]"])
def test_gitignore_line_git_cannot_match_is_ignored_as_git_does(tmp_path: Path, line: str) -> None:
    root = _project(tmp_path / "p")
    (root / ".gitignore").write_text(f"{line}\nignored_*.py\n")
    (root / "ignored_one.py").write_text(TRAINER)
    lint = _run([*TRAINWRIGHT, "lint", "."], root)
    _clean(lint)
    assert lint.returncode == 1
    assert "train.py:6:20: TW303" in lint.stdout
    assert "ignored_one.py" not in lint.stdout  # the lines after it still apply


def _deep_pyproject(root: Path) -> Path:
    return _project(root, PYPROJECT + "[tool.other]\ny = " + "[" * 5000 + "]" * 5000 + "\n")


def test_deeply_nested_pyproject_is_a_message(tmp_path: Path) -> None:
    root = _deep_pyproject(tmp_path / "p")
    lint = _run([*TRAINWRIGHT, "lint", "."], root)
    _clean(lint)
    assert lint.returncode == 2
    assert "pyproject.toml" in lint.stderr and "nested too deeply" in lint.stderr


def test_deeply_nested_pyproject_fails_flake8_loudly(tmp_path: Path) -> None:
    """flake8 cannot know the target either: the run fails with the reason, never "0, nothing linted"."""
    root = _deep_pyproject(tmp_path / "p")
    flake8 = _run(FLAKE8, root)
    _clean(flake8)
    said = flake8.stdout + flake8.stderr  # flake8 prints its critical errors on stdout
    assert "nested too deeply" in said and "no file was linted" in said, said
    assert flake8.returncode == 1


def _deep_setup_py(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "train.py").write_text(TRAINER)
    expression = "1+" * 100_000 + "1"
    (root / "setup.py").write_text(
        f'from setuptools import setup\nsetup(name="p", install_requires=["transformers==5.24.0"], x={expression})\n'
    )
    return root


@pytest.mark.parametrize("command", [["lint", "."], ["flake8"]])
def test_deep_expression_in_setup_py_is_a_warning_and_the_files_are_linted(
    tmp_path: Path, command: list[str]
) -> None:
    root = _deep_setup_py(tmp_path / "p")
    # flake8's own parse of setup.py fails on such an expression (not ours to judge): it is excluded
    flake8 = [*FLAKE8, "--exclude", "setup.py"]
    done = _run(flake8 if command == ["flake8"] else [*TRAINWRIGHT, *command], root)
    _clean(done)
    assert "setup.py" in done.stderr and "nested too deeply" in done.stderr, done.stderr
    assert "TW303" in done.stdout
    assert done.returncode == 1


# --------------------------------------------------------------------------- item 15: deep trees


def _remove_chain(top: Path) -> None:
    """Remove a one-folder-per-level tree bottom-up (``shutil.rmtree``, and so pytest's clean-up,
    recurses once per level and fails on it)."""
    levels = [top]
    while True:
        below = [e for e in os.scandir(levels[-1]) if e.is_dir(follow_symlinks=False)]
        if not below:
            break
        levels.append(Path(below[0].path))
    for folder in reversed(levels):
        for entry in os.scandir(folder):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if folder != top:
            os.rmdir(folder)


def test_folder_tree_1500_levels_deep_is_walked_without_recursion(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    folder = root
    try:
        for _ in range(1500):  # os.makedirs itself recurses once per level
            folder = folder / "d"
            folder.mkdir()
        (folder / "deep.py").write_text(TRAINER)
        lint = _run([*TRAINWRIGHT, "lint", "--output-format", "concise", "."], root)
    finally:
        _remove_chain(root)
    _clean(lint)
    assert lint.returncode == 1
    assert "train.py:6:20: TW303" in lint.stdout
    assert "/d/deep.py:6:20: TW303" in lint.stdout
