"""Issue 38 item 9: a generic Trainer subclass (``class T[X](Trainer):``, PEP 695, Python 3.12+) is
never silently skipped.

The textual pre-scan looked for ``class Name(`` and missed ``class Name[X](``, so the file was never
parsed: no finding and no TW000, on every Python. Now the pre-scan keeps it; on Python 3.12+ it is
linted like any subclass, and on 3.11 (where ``ast`` cannot parse it) it is one TW000 that says why.
libcst 1.x parses the syntax on any Python (the fixer's side).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from trainwright_lint import prefilter

GENERIC = """\
from transformers import Trainer


class T[X](Trainer):
    def log_size(self):
        return len(self.tokenizer)
"""

HEADERS = [
    "class T[X](Trainer):",
    "class T [X, *Ts, **P] (Trainer):",
    "class T[X: (int, str) = int](Trainer):",
    "class T[\n    X: list[int],\n](Trainer):",
]


@pytest.mark.parametrize("header", HEADERS)
def test_the_pre_scan_keeps_a_generic_subclass(header: str) -> None:
    text = f"from transformers import Trainer\n\n\n{header}\n    pass\n"
    assert prefilter.might_define_target(text)
    assert prefilter.worth_linting(text)


def test_the_pre_scan_still_skips_a_plain_subscript() -> None:
    assert not prefilter.has_class_with_bases("Trainer\nclass T[X]:\n    pass\n")


def test_libcst_parses_type_parameters() -> None:
    module = cst.parse_module(GENERIC)
    assert isinstance(module.body[1], cst.ClassDef) and module.body[1].type_parameters is not None


def test_a_generic_trainer_is_linted_or_reported(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(GENERIC)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainwright_lint",
            "lint",
            "--transformers-version",
            "5.24.0",
            "--output-format",
            "concise",
            ".",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, (done.stdout, done.stderr)
    if sys.version_info >= (3, 12):
        assert "train.py:6:20: TW303" in done.stdout
    else:
        assert "train.py:4:" in done.stdout and "TW000" in done.stdout
        assert "type parameters" in done.stdout and "Python 3.12" in done.stdout, done.stdout
