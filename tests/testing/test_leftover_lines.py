"""Lines a program prints before it fails to set up are not the next program's (issue 32).

The oracle's child trains several programs in one interpreter and hands each phase the lines printed
since the last one was taken. A program that failed while importing never reached a phase, so its
import-time lines stayed behind and became the first phase's lines of the next program: on
2026-12-07 one test-split move was judged "different" from its original by two lines another
project logged at import. Each program now starts with no lines of another.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing.oracle import Spec, run_specs

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "tests" / "oracle" / "programs" / "plain.py"
FAILS = Path(__file__).parent / "programs" / "setup" / "prints_then_fails.py"


def test_a_failed_set_up_leaves_no_lines_to_the_next_program() -> None:
    failed, plain = run_specs([Spec(module=FAILS, resume=False), Spec(module=PLAIN, resume=False)])
    assert failed.error is not None and "key file" in failed.error
    assert not plain.failed
    printed = [line for phase in plain.phases for line in phase.lines]
    assert not [line for line in printed if "keys" in line], printed
