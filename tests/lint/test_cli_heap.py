"""``cli.keep_freed_heap``: a CLI run keeps the heap memory one file's parse frees for the next one
(glibc only), instead of handing it back and faulting it in again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

GLIBC = "CS_GNU_LIBC_VERSION" in getattr(os, "confstr_names", {}) and bool(os.confstr("CS_GNU_LIBC_VERSION"))

# Frees 60 MB of heap blocks (100 KB each: below glibc's mmap threshold, so they come from the heap
# top), then prints how much of it the process still holds.
PROBE = textwrap.dedent(
    """
    import sys
    from trainwright_lint.cli import keep_freed_heap

    def rss_kb():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * 4

    if sys.argv[1] == "keep":
        keep_freed_heap()
    blocks = [bytearray(100_000) for _ in range(600)]
    held = rss_kb()
    del blocks
    print(rss_kb() - (held - 60_000))
    """
)


def _kept_kb(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_freed_heap_is_kept_only_when_asked() -> None:
    assert _kept_kb("default") < 20_000  # glibc trimmed most of the freed 60 MB
    assert _kept_kb("keep") > 50_000  # kept for the next parse
