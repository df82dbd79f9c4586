"""Issue 38 item 10: one huge ``.py`` file is one TW000, and the run goes on within bounded memory.

(Ten megabytes of ordinary code and comments are still linted: ``tests/lint/test_robust_pathological.py``.)

A 20 MB data file that mentions a Trainer cost 9.3 GB to parse, and on a machine without that much
the whole run ended in ``internal error MemoryError`` with nothing reported. Here the CLI runs in a
real process whose address space is capped (``RLIMIT_AS``, 2 GiB, a small CI runner), so the old
parse fails the same way without taking the shared machine's memory; the huge file must be reported
alone and the ordinary trainer beside it still linted.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest
from trainwright_lint.sourcefile import MAX_PARSE_ITEMS, parse_items

TRAINER = """\
from transformers import Trainer


class T(Trainer):
    def log_size(self):
        return len(self.tokenizer)
"""
CAP = 2 << 30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def _huge(path: Path, megabytes: int) -> None:
    row = "    [" + ", ".join(str(i) for i in range(40)) + "],\n"  # a data literal: the costliest to parse
    rows = megabytes * 2**20 // len(row) + 1
    with open(path, "w") as fh:
        fh.write("from transformers import Trainer\n\n\nclass Data(Trainer):\n    pass\n\n\nTABLE = [\n")
        fh.write(row * rows)
        fh.write("]\n")


@pytest.mark.parametrize("command", ["lint", "fix"])
def test_huge_file_is_one_tw000_and_the_run_goes_on(tmp_path: Path, command: str) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["transformers==5.24.0"]\n'
    )
    (tmp_path / "train.py").write_text(TRAINER)
    _huge(tmp_path / "data.py", 20)
    assert parse_items((tmp_path / "data.py").read_text()) > MAX_PARSE_ITEMS
    done = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", command, "--output-format", "concise", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_capped,
        check=False,
    )
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-2000:]
    tw000 = [line for line in done.stdout.splitlines() if "TW000" in line]
    assert len(tw000) == 1 and tw000[0].startswith("data.py:1:1: TW000"), done.stdout
    assert "items (commas and lines) are over the 1,000,000 a source file may have" in tw000[0]
    if command == "lint":
        assert "train.py:6:20: TW303" in done.stdout
    else:
        assert "self.processing_class" in (tmp_path / "train.py").read_text()
    assert done.returncode == 1
