"""``supervisor``: one forked child does the whole run; the parent holds the per-file time limit.

Real processes, real time limits: a key that runs past the limit or kills its process is skipped in
a fresh child, and the rest of the work still gets done."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

import pytest
from trainwright_lint import supervisor

pytestmark = pytest.mark.skipif(not supervisor.available(), reason="needs fork")

KEYS = ["a.py", "slow.py", "b.py", "dies.py", "c.py"]


def _work(beat: supervisor.Beat, skipped: Mapping[str, str]) -> dict[str, str]:
    """Process each key; "slow.py" hangs, "dies.py" kills its process (as a segfault would)."""
    out = {}
    for key in KEYS:
        if key in skipped:
            out[key] = skipped[key]
            continue
        beat(key)
        if key == "slow.py":
            time.sleep(30)
        if key == "dies.py":
            os._exit(7)
        out[key] = f"done in {os.getpid()}"
    beat(None)
    return out


def describe(limit: float) -> str:
    return f"took longer than {limit:g}s"


def test_a_slow_and_a_dying_key_are_skipped_and_the_rest_is_done() -> None:
    start = time.monotonic()
    result = supervisor.run(_work, timeout=0.5, describe_timeout=describe)
    assert time.monotonic() - start < 20  # the hang was cut short
    assert result["slow.py"] == "took longer than 0.5s"
    assert result["dies.py"] == "internal error (the worker process died: exit status 7)"
    assert {result[k].split(" in ")[0] for k in ("a.py", "b.py", "c.py")} == {"done"}
    assert str(os.getpid()) not in result["a.py"]  # the work ran in a child, not here


def test_time_between_keys_has_no_limit() -> None:
    def work(beat: supervisor.Beat, skipped: Mapping[str, str]) -> str:
        beat("x.py")
        beat(None)
        time.sleep(0.6)  # longer than the limit, but no key is running
        return "finished"

    assert supervisor.run(work, timeout=0.3, describe_timeout=describe) == "finished"


def test_an_exception_in_the_child_is_raised_here_with_its_traceback() -> None:
    def work(beat: supervisor.Beat, skipped: Mapping[str, str]) -> None:
        raise ValueError("bad input in the rules")

    with pytest.raises(supervisor.WorkerError, match="ValueError: bad input in the rules"):
        supervisor.run(work, timeout=5, describe_timeout=describe)


def test_a_child_dying_between_keys_is_an_error_not_a_silent_result() -> None:
    def work(beat: supervisor.Beat, skipped: Mapping[str, str]) -> None:
        os._exit(3)

    with pytest.raises(supervisor.WorkerError, match="died between files"):
        supervisor.run(work, timeout=5, describe_timeout=describe)


def test_a_large_result_comes_back_whole() -> None:
    def work(beat: supervisor.Beat, skipped: Mapping[str, str]) -> list[str]:
        return [f"finding {i} " + "x" * 200 for i in range(20_000)]  # megabytes: many pipe reads

    result = supervisor.run(work, timeout=5, describe_timeout=describe)
    assert len(result) == 20_000 and result[-1].startswith("finding 19999 ")
