"""A program that never returns costs its own ``timeout_s``, not the child's: its record says it timed out,
the process it started is killed, and the programs after it still train (``trainwright.testing._deadline``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwright.testing.oracle import TIMEOUT_VARIABLE, Spec, run_specs

PROGRAMS = Path(__file__).resolve().parent / "programs"


def test_a_hung_program_times_out_alone() -> None:
    # the second never lets the exception through either: its clean-up waits too (``GRACE_S``)
    hung, stuck, after = run_specs(
        [
            Spec(PROGRAMS / "hangs.py", grad_accum=(1,), resume=False, timeout_s=5.0),
            Spec(PROGRAMS / "hangs_in_cleanup.py", grad_accum=(1,), resume=False, timeout_s=3.0),
            Spec(PROGRAMS / "plain.py", grad_accum=(1,), resume=False),
        ]
    )
    assert hung.error is not None and "timed out after 5 s" in hung.error, hung.error
    assert stuck.error is not None and "timed out after 3 s" in stuck.error, stuck.error
    assert after.error is None and not after.failed, after  # run in a fresh child after each stop
    assert [p.name for p in after.phases] == ["ga1/train"]


def test_the_per_program_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TIMEOUT_VARIABLE, raising=False)
    assert Spec(PROGRAMS / "plain.py").timeout_s == 600.0
    monkeypatch.setenv(TIMEOUT_VARIABLE, "90")
    assert Spec(PROGRAMS / "plain.py").timeout_s == 90.0
    for bad in ("ninety", "0", "-5"):
        monkeypatch.setenv(TIMEOUT_VARIABLE, bad)
        with pytest.raises(ValueError, match=TIMEOUT_VARIABLE):
            Spec(PROGRAMS / "plain.py")
