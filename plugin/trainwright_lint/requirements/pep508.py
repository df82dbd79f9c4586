"""One PEP 508 requirement string -> (name, PEP 440 specifier, marker), for the one library we look for.

Why not ``packaging.requirements.Requirement`` for every line: importing it costs ~40 ms (it pulls
``packaging.markers`` and ``packaging.tags``), against ~10 ms for ``packaging.specifiers``, and the
pre-commit hook pays it on every commit. The name is read with the PEP 508 name pattern first; only a
line that names the library is parsed further, its specifier by :class:`packaging.specifiers.SpecifierSet`
and its marker, when there is one, by :class:`packaging.markers.Marker` (imported then).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# PEP 508: a name, optional [extras], then a version spec, "@ url" or nothing, then an optional "; marker".
_REQUIREMENT = re.compile(
    r"""^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*
    (?:\[(?P<extras>[^\]]*)\])?\s*
    (?P<rest>[^;]*?)\s*
    (?:;\s*(?P<marker>.*?))?\s*$""",
    re.VERBOSE,
)


class RequirementSyntaxError(ValueError):
    """A requirement on the library that is not valid PEP 508; the message quotes it."""


@dataclass(frozen=True)
class Requirement:
    name: str  # normalised (PEP 503)
    specifier: str  # PEP 440 specifier set, "" when the line names no version
    marker: str | None


def normalise(name: str) -> str:
    """PEP 503 name normalisation: ``Transformers``, ``transformers_`` spellings compare equal."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text: str, library: str) -> Requirement | None:
    """The requirement on ``library`` in ``text``, or ``None`` when ``text`` is about another package.

    Raises :class:`RequirementSyntaxError` when it names ``library`` but its version part is not PEP 440.
    """
    match = _REQUIREMENT.match(text)
    if match is None or normalise(match["name"]) != library:
        return None
    rest = match["rest"].strip()
    if rest.startswith("@"):  # a direct URL reference: no version to read
        rest = ""
    if rest.startswith("(") and rest.endswith(")"):  # the old "name (>=1.0)" form
        rest = rest[1:-1].strip()
    if rest:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        rest = re.sub(r"\s+", "", rest)  # as written (SpecifierSet's str() reorders the clauses)
        try:
            SpecifierSet(rest)
        except InvalidSpecifier as exc:
            raise RequirementSyntaxError(f"{text.strip()!r} is not a valid requirement ({exc})") from None
    return Requirement(library, rest, match["marker"] or None)


def marker_applies(marker: str | None) -> bool:
    """Whether a requirement's marker holds here; lenient: a marker we cannot evaluate counts as true.

    ``extra == "..."`` is evaluated with every extra installed, since a declared extra is part of what
    the project supports.
    """
    if not marker:
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedEnvironmentName

    try:
        parsed = Marker(marker)
    except InvalidMarker:
        return True
    if "extra" in marker:
        return True
    try:
        return bool(parsed.evaluate())
    except UndefinedEnvironmentName:
        return True
