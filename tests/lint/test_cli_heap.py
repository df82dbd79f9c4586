"""``cli.keep_freed_heap``: a CLI run keeps the heap memory one file's parse frees for the next one
(glibc only), instead of handing it back and faulting it in again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

GLIBC = "CS_GNU_LIBC_VERSION" in getattr(os, "confstr_names", {}) and bool(os.confstr("CS_GNU_LIBC_VERSION"))

# In one process: put glibc's trim threshold back to its documented default (how far it has adapted to
# what the process freed before differs between environments), free 150 MB of heap blocks (100 KB each,
# below the mmap threshold, so they come from the heap top) and measure what is kept; then the same
# after ``keep_freed_heap``.
PROBE = textwrap.dedent(
    """
    import ctypes
    from trainwright_lint.cli import keep_freed_heap

    def rss_kb():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * 4

    def kept_after_freeing(n=1500):
        blocks = [bytearray(100_000) for _ in range(n)]
        held = rss_kb()
        del blocks
        return rss_kb() - (held - n * 100)

    ctypes.CDLL(None).mallopt(-1, 128 * 1024)  # M_TRIM_THRESHOLD: glibc's default
    default = kept_after_freeing()
    keep_freed_heap()
    print(default, kept_after_freeing())
    """
)


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_freed_heap_is_kept_only_when_asked() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    default, kept = map(int, out.stdout.split())
    assert default < 20_000  # glibc handed the freed 150 MB back
    assert kept > 140_000  # kept for the next parse
