"""``trainwright lint ... | head`` ends quietly: no ``BrokenPipeError`` traceback when the reader
closes the pipe early, whatever the format.

The output is made larger than a pipe's buffer (64 KiB on Linux), so the writer is still writing when
the reader goes away, which is when the traceback used to appear.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import TRAINER_HEAD


@pytest.fixture(scope="module")
def many_files_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pipe")
    (root / "pyproject.toml").write_text('[tool.trainwright]\ntransformers-version = "5.24.0"\n')
    for i in range(400):
        (root / f"train_{i}.py").write_text(
            TRAINER_HEAD + "    def _save_checkpoint(self, model, trial):\n        pass\n"
            "    def _inner_training_loop(self, batch_size=None):\n        pass\n",
            encoding="utf-8",
        )
    return root


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "github"])
def test_lint_into_a_closed_pipe(many_files_project: Path, fmt: str) -> None:
    option = ["--output-format", fmt] if fmt in ("full", "concise") else ["--format", fmt]
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", *option, "."],
        cwd=many_files_project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert first.strip(), stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert code == 1


def test_the_output_is_larger_than_a_pipe(many_files_project: Path) -> None:
    """The check above would pass vacuously if everything fitted in the pipe's buffer."""
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", "--output-format", "concise", "."],
        cwd=many_files_project,
        capture_output=True,
        check=False,
    )
    assert len(result.stdout) > 1 << 17
