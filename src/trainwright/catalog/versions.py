"""PEP 440 ordering and "nearest covered release" resolution, without depending on ``packaging``.

Why not ``packaging``: the lint side must run with only libcst and flake8 installed, and the only
versions we compare are transformers release strings (``X.Y.Z`` plus optional pre/post/dev/local parts),
for which this small parser is exact.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import cache

_VERSION_PATTERN = r"""^\s*v?
    (?:(?P<epoch>\d+)!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>a|alpha|b|beta|rc|c|pre|preview)[-_.]?(?P<pre_n>\d*))?
    (?:(?:-(?P<post_n1>\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(?P<post_n2>\d*)))?
    (?:[-_.]?dev[-_.]?(?P<dev_n>\d*))?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
    \s*$"""


@cache
def _version_re() -> re.Pattern[str]:
    """The full PEP 440 pattern, compiled on first need (3 ms, which a lint run of plain releases such
    as ``4.46.2`` never spends: ``version_key`` reads those without it)."""
    return re.compile(_VERSION_PATTERN, re.VERBOSE | re.IGNORECASE)


_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

VersionKey = tuple[int, tuple[int, ...], tuple[int, int], tuple[int, int], tuple[int, int]]


def version_key(version: str) -> VersionKey:
    """A sort key that orders version strings as PEP 440 does (local labels ignored).

    Raises ``ValueError`` naming the string when it is not a PEP 440 version.
    """
    parts = version.split(".")
    if all(part.isascii() and part.isdigit() for part in parts):  # a final release: what the pattern gives
        return (0, _release(parts), (3, 0), (0, 0), (1, 0))
    match = _version_re().match(version)
    if match is None:
        raise ValueError(
            f"not a PEP 440 version: {version!r} (expected something like '4.46.2' or '5.0.0.dev0')"
        )
    release = _release(match["release"].split("."))
    dev_present = match["dev_n"] is not None
    dev = (0, int(match["dev_n"] or 0)) if dev_present else (1, 0)
    if match["pre_l"]:
        pre = (_PRE_RANK[match["pre_l"].lower()], int(match["pre_n"] or 0))
    elif dev_present and match["post_n1"] is None and match["post_n2"] is None:
        pre = (-1, 0)  # X.Y.devN sorts before X.YaN
    else:
        pre = (3, 0)  # final release
    post_raw = match["post_n1"] if match["post_n1"] is not None else match["post_n2"]
    post = (0, 0) if post_raw is None else (1, int(post_raw or 0))
    return (int(match["epoch"] or 0), release, pre, post, dev)


def _release(parts: Sequence[str]) -> tuple[int, ...]:
    """The release numbers, trailing zeros dropped (``4.46.0`` equals ``4.46``)."""
    release = tuple(int(part) for part in parts)
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    return release


def sort_versions(versions: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(versions, key=version_key))


def nearest_at_or_below(version: str, covered: Sequence[str]) -> str:
    """The newest of ``covered`` (ascending) that is <= ``version``; the oldest if ``version`` predates all.

    Why "at or below": an uncovered patch release (4.46.2) or a development build (5.25.0.dev0) carries
    the code of the release line it was cut from, so the closest earlier covered release describes it.
    """
    if not covered:
        raise ValueError("no covered versions to resolve against")
    keys = [version_key(v) for v in covered]
    index = bisect_right(keys, version_key(version))
    return covered[max(index - 1, 0)]
