"""Intersecting "any of these specifier sets" statements without multiplying them.

Each statement about a library (a dependency line, a Poetry ``a || b``) is a tuple of PEP 440
specifier sets of which any one may hold; a project's statements must all hold, so the combination is
the product of the tuples. Kept as strings, that product grew as 2^n: 16 Poetry groups each saying
``^4.44 || ^5.0`` took 54 s and 20 groups 7.7 GB. Most of it is empty or repeated: a branch that
intersects ``>=4.44,<5`` with ``>=5.0,<6`` admits nothing, and ``>=4.44,<5`` met twice is itself. So
every set is brought to one canonical form (the tightest lower and upper bound, the other clauses
sorted), empty ones are dropped and equal ones merged after each step. The bounds come from at most
one clause per statement branch, so the number of distinct results is bounded by (lower bounds) x
(upper bounds), not by a power; :data:`MAX_ALTERNATIVES` stops the rare case that still grows (many
different ``!=`` clauses), with a message, instead of the machine.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

MAX_ALTERNATIVES = 512

Bound = tuple[Version, bool, str]  # the version, whether it is included, the clause as written


class TooManyAlternatives(ValueError):
    """The statements combine into more than :data:`MAX_ALTERNATIVES` distinct specifier sets."""


def _tighter(current: Bound | None, new: Bound, lower: bool) -> Bound:
    if current is None:
        return new
    if new[0] != current[0]:
        return new if (new[0] > current[0]) == lower else current
    return current if not current[1] else new  # at the same version the exclusive bound is tighter


def canonical(specifiers: str) -> str | None:
    """``specifiers`` (a PEP 440 set) with its range reduced to one lower and one upper bound, the rest
    sorted; ``None`` when the bounds admit no version. Text the parser refuses is returned as it is."""
    if not specifiers:
        return ""
    try:
        parsed = SpecifierSet(specifiers)
        lower: Bound | None = None
        upper: Bound | None = None
        others: set[str] = set()
        for spec in parsed:
            op, text = spec.operator, spec.version
            if op in (">=", ">") or (op == "==" and not text.endswith(".*")):
                lower = _tighter(lower, (Version(text), op != ">", str(spec)), lower=True)
            if op in ("<=", "<") or (op == "==" and not text.endswith(".*")):
                upper = _tighter(upper, (Version(text), op != "<", str(spec)), lower=False)
            if op not in (">=", ">", "<=", "<", "==") or (op == "==" and text.endswith(".*")):
                others.add(str(spec))
    except (InvalidSpecifier, InvalidVersion):
        return specifiers
    if lower is not None and upper is not None:
        if lower[0] > upper[0] or (lower[0] == upper[0] and not (lower[1] and upper[1])):
            return None
        if lower[0] == upper[0]:
            return ",".join([f"=={lower[0]}", *sorted(others)])
    bounds = [b[2] for b in (lower, upper) if b is not None]
    return ",".join([*bounds, *sorted(others)])


def combine(statements: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The specifier sets of which any one satisfies every statement (each a tuple of alternatives);
    ``("",)`` for no statement; when no version can satisfy them all, one contradictory set as
    written (the target resolution then says that no release satisfies it). Raises
    :class:`TooManyAlternatives` past :data:`MAX_ALTERNATIVES`."""
    result: tuple[str, ...] = ("",)
    for alternatives in statements:
        merged: dict[str, None] = {}
        for a in result:
            for b in alternatives:
                joined = canonical(",".join(p for p in (a, b) if p))
                if joined is not None:
                    merged[joined] = None
        if not merged:  # contradictory: kept as written, so the resolver names what admits nothing
            merged[",".join(p for p in (result[0], alternatives[0]) if p)] = None
        if len(merged) > MAX_ALTERNATIVES:
            raise TooManyAlternatives(
                f"the version statements combine into more than {MAX_ALTERNATIVES} alternative ranges"
            )
        result = tuple(merged)
    return result
