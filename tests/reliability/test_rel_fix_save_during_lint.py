"""Issue 38 item 1: a file saved while ``fix`` lints it must never be corrupted.

``fix`` used to lint the whole project, then read each file again and apply the lint-time edits,
addressed by line and column, to whatever the file held by then. An ordinary save during the lint (a
class moved up) made ``fix``, ``lint --fix`` (the pre-commit entry) and ``fix -j 2`` rename
``self.tokenizer`` inside an unrelated ``Data`` class, exit 0, "fixed 1 finding".

Each case is the real CLI in a real process; the save is made by a hook right after the file's lint
task returns (``save_during_lint.py``), so it lands between the lint's read and the fix's read every
time, with no sleep and no race. The fix must apply only edits computed from the bytes it writes:
the Trainer's ``self.tokenizer`` is renamed, the ``Data`` class's is left alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent

BEFORE = """\
from transformers import Trainer


class MyTrainer(Trainer):
    def log_size(self):
        return len(self.tokenizer)


class Data:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def size(self):
        return len(self.tokenizer)
"""

# The same code with ``Data`` moved above the trainer: the lint-time finding's line and column
# (6:20) now point at ``Data.size``'s ``self.tokenizer``.
SAVED = """\
from transformers import Trainer


class Data:
    def size(self):
        return len(self.tokenizer)

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer


class MyTrainer(Trainer):
    def log_size(self):
        return len(self.tokenizer)
"""

FIXED = SAVED.replace("return len(self.tokenizer)\n", "return len(self.processing_class)\n").replace(
    "        return len(self.processing_class)\n\n    def __init__",
    "        return len(self.tokenizer)\n\n    def __init__",
)

FILLERS = 30  # above the runner's PARALLEL_MIN_FILES, so that ``-j 2`` really uses the worker pool


def _project(tmp_path: Path, fillers: int = 0) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["transformers==5.24.0"]\n'
    )
    target = tmp_path / "train.py"
    target.write_text(BEFORE)
    for i in range(fillers):
        (tmp_path / f"filler_{i:02d}.py").write_text(f"class Filler{i}:\n    pass\n")
    return target


def _run(tmp_path: Path, target: Path, *args: str, phase: str = "lint") -> subprocess.CompletedProcess[str]:
    saved = tmp_path.parent / f"{tmp_path.name}-saved.txt"
    saved.write_text(SAVED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, str(HERE / "save_during_lint.py"), phase, str(target), str(saved), "--", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


CASES = {
    "fix": ("fix", "-j", "1", "."),
    "lint --fix": ("lint", "--fix", "-j", "1", "."),
    "fix -j 2": ("fix", "-j", "2", "."),
    "fix --file-timeout 0": ("fix", "-j", "1", "--file-timeout", "0", "."),
}


def test_the_expected_result_differs_from_both_texts() -> None:
    assert FIXED.count("self.processing_class") == 1
    assert FIXED != SAVED and "class Data:\n    def size(self):\n        return len(self.tokenizer)" in FIXED


@pytest.mark.parametrize("name", sorted(CASES))
def test_save_during_lint_is_never_corrupted(tmp_path: Path, name: str) -> None:
    target = _project(tmp_path, FILLERS if "-j 2" in name else 0)
    done = _run(tmp_path, target, *CASES[name])
    text = target.read_text()
    assert "Traceback" not in done.stderr, done.stderr
    # Data's own attribute is never renamed: that was the corruption.
    assert "class Data:\n    def size(self):\n        return len(self.tokenizer)" in text, (text, done.stderr)
    assert text == FIXED, (text, done.stdout, done.stderr)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("name", ["fix", "lint --fix"])
def test_save_between_fixing_and_writing_is_refused_by_name(tmp_path: Path, name: str) -> None:
    """The other window: the save lands after the fixer read its snapshot, before the write. The
    write is refused with the named message, the saved text is kept, and the exit status is 2."""
    target = _project(tmp_path)
    done = _run(tmp_path, target, *CASES[name], phase="fix")
    assert target.read_text() == SAVED, done.stderr
    assert "train.py: changed while fixing; not written — run fix again" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
