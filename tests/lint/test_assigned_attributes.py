"""Step counters (``self.x += 1``) are found from the rare ``+= 1``, read back to ``self.``: the same
names as the regular expression that scanned from every ``self.``."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from trainwright_lint.analysis.workspace import _counters

# The expression the scan replaces, kept here as the reference.
COUNTER = re.compile(r"self\.(\w+)\s*\+=\s*1\b")

PIECES = [
    "self.",
    "myself.",
    "self.self.",
    "t0",
    "step",
    "é",
    "_",
    " ",
    "\u00a0",
    "\n",
    "=",
    "==",
    "+=",
    "<=",
    "1",
    "10",
    "time.",
    "time",
    "perf_counter",
    "monotonic",
    "_ns",
    "datetime.",
    "now",
    "utcnow",
    "timeit.default_timer",
    "(",
    ")",
    ".",
    "x",
]

texts = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_the_scan_finds_what_the_expression_finds(text: str) -> None:
    assert _counters(text) == frozenset(COUNTER.findall(text))


def test_real_lines() -> None:
    text = (
        "        self.t0 = time.perf_counter()\n"
        "        self._start  =  datetime.datetime.now ()\n"
        "        self.t1 == time.time()\n"
        "        self.step += 1\n"
        "        self.total += 10\n"
        "        self.é_count  +=  1  # ok\n"
        "        self.a = self.b = time.monotonic_ns()\n"
    )
    assert _counters(text) == {"step", "é_count"} == frozenset(COUNTER.findall(text))
