"""Which releases of transformers (and TRL) the linter checks against, and why: a :class:`Target`.

Order (the first that applies wins), the same for ``transformers`` and ``trl``:

1. ``--transformers-version`` / ``--trl-version`` (``--tw-...`` in flake8);
2. ``[tool.trainwright] transformers-version`` / ``trl-version``;
3. the project's own requirement (lock file, pyproject.toml, setup.cfg, setup.py, requirements files:
   see :mod:`trainwright_lint.requirements` for the precedence between them);
4. the installed release (package metadata, never an import);
5. the newest catalogued release, with a warning (for TRL without one: a project that neither
   declares nor installs TRL has no TRL trainer subclasses to check, so saying so would be noise).

Each of 1-3 may be a version (``4.45.2``) or a range (``>=4.44,<4.46``, Poetry's ``^4.44``); a range
is every catalogued release inside it. Nothing is remapped silently: an exact version the catalogue
lacks is checked as the nearest catalogued release at or below it, with a warning naming it (4.46.2
-> 4.46.1; 4.99 -> 4.57.6; 5.26.0, newer than the catalogue but in its newest major line, -> 5.25.0,
with how to cover it: ``trainwright catalog add 5.26.0``);
a range reaching below the catalogue is checked on the catalogued part, with a warning; a version or
range entirely outside it (``3.0``, ``<4.30``, ``7.0``, ``>=6``) is a :class:`TargetError` (exit 2)
naming the catalogue's span, except a project's own declared or installed release entirely below
the catalogue (``transformers==4.18.0``): that is checked against the oldest catalogued release by the
rules that hold on every release, the others off (``release_dependent``), with one warning. Why the newest major line counts as inside: releases ship faster than
the catalogue is rebuilt, and a patch or minor release keeps its line's Trainer API far more often
than a major one does. For TRL from a declared or installed release (not one the user chose), an
out-of-catalogue version warns and uses the nearest end of the catalogue instead: a stale TRL pin
must not stop the lint of a project that has no TRL trainer subclass.

"The catalogue" includes the releases added after it shipped (:mod:`trainwright.catalog.usercache`: the
installed release when newer, and ``trainwright catalog add``); ``describe()`` names where each of those
came from. An installed release newer than the catalogue that could not be added (its source unreadable)
is named by one warning when the range admits it, never dropped without a word.

Why ``packaging`` is imported only for ranges: exact versions (the catalogued ones named on the command
line, every lock file) are compared with the catalogue's own PEP 440 key, and the pre-commit hook
starts on every commit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

FALLBACK_SOURCE = "newest catalogued, no requirement found"
INSTALLED_SOURCE = "installed"
_EXACT = re.compile(r"^\s*===?\s*(?P<version>[^\s,*<>=!~;]+)\s*$")
_PLAIN = re.compile(r"^\s*v?\d+(?:\.\d+)*[0-9A-Za-z.+_-]*\s*$")


class TargetError(ValueError):
    """No catalogued release can stand for what was asked (exit status 2); the message says why and
    what to pass instead."""


class _BelowCatalogue(TargetError):
    """A project's declared or installed release older than every catalogued one."""


def release_dependent() -> tuple[str, ...]:
    """The rules whose verdict depends on what a release's Trainer defines, passes or removed, as each
    rule declares it (``Rule.release_facts``). For a project pinned below the catalogue they would judge
    code against a Trainer it does not run, so they are off; the rest hold on old releases too. Read
    from the registry when a pin is below the catalogue only: resolving a target imports no rule."""
    from trainwright_lint.rules import release_dependent as declared

    return declared()


@dataclass(frozen=True)
class Target:
    """The catalogued releases of ``library`` to check against (ascending, never empty), what was asked
    (``specifier``, as written) and where that came from (``source``), plus the warnings to show."""

    library: str
    releases: tuple[str, ...]
    specifier: str
    source: str
    warnings: tuple[str, ...] = ()
    # The project's own pin lies entirely below the catalogue (``transformers==4.18.0``): only the rules
    # that hold on every release run, checked against the oldest catalogued one (``release_dependent``).
    below_catalogue: bool = False
    # Where the facts of releases added after the catalogue shipped came from ("5.25.0 from the installed
    # source"), for those among ``releases``.
    provenance: tuple[str, ...] = ()

    @property
    def newest(self) -> str:
        """The newest release of the target: what an engine that checks one release checks."""
        return self.releases[-1]

    @property
    def is_fallback(self) -> bool:
        return self.source == FALLBACK_SOURCE

    def describe(self) -> str:
        """``transformers >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2``; the arrow part is left out
        when the specifier is exactly the one release checked, spelt as the catalogue spells it."""
        text = f"{self.library} {self.specifier} ({self.source})"
        exact = _EXACT.match(self.specifier)
        asked = exact["version"] if exact else self.specifier.strip()
        origin = "".join(f", {p}" for p in self.provenance)
        if self.releases == (asked,):
            return text + origin
        span = self.releases[0] if len(self.releases) == 1 else f"{self.releases[0]}–{self.releases[-1]}"
        return f"{text} → {span}{origin}"


def _same(a: str, b: str, key: Callable[[str], Any]) -> bool:
    try:
        return bool(key(a) == key(b))
    except ValueError:
        return False


# ------------------------------------------------------------------------------------------ resolution


def resolve_project_target(
    library: str,
    project_root: Path | None,
    *,
    option: str | None = None,
    configured: str | None = None,
    option_name: str | None = None,
) -> Target:
    """The target for ``library`` (``"transformers"`` or ``"trl"``) by the order in the module docstring.

    ``option`` is the command-line value (named ``option_name``, default ``--<library>-version``),
    ``configured`` the ``[tool.trainwright]`` one, ``project_root`` where the project's files are
    read (``None``: do not read any). Raises :class:`TargetError` (a ``ValueError``) when no
    catalogued release can stand for the requested one.
    """
    from trainwright.catalog import load_catalog

    target = _project_target(library, project_root, option, configured, option_name)
    return replace(target, provenance=load_catalog(library).provenance(target.releases))


def _project_target(
    library: str,
    project_root: Path | None,
    option: str | None,
    configured: str | None,
    option_name: str | None,
) -> Target:
    from trainwright.catalog import installed_version, load_catalog

    catalog = load_catalog(library)
    versions = catalog.versions
    option_name = option_name or f"--{library}-version"
    if option is not None:
        shown, alternatives = parse_version_text(option, option_name)
        return _resolve(library, versions, shown, alternatives, option_name, strict=True, option=option_name)
    if configured is not None:
        where = f"[tool.trainwright] {library}-version"
        shown, alternatives = parse_version_text(configured, where)
        return _resolve(library, versions, shown, alternatives, where, strict=True, option=option_name)
    notes: list[str] = []
    if project_root is not None:
        from trainwright_lint.requirements import find_declaration

        declaration = find_declaration(project_root, library, notes)
        if declaration is not None:
            target = _resolve(
                library,
                versions,
                declaration.display,
                declaration.alternatives,
                declaration.source,
                strict=library == "transformers",
                option=option_name,
                older_ok=True,
            )
            return replace(target, warnings=(*notes, *target.warnings))
    installed = installed_version(library)
    if installed is not None:
        target = _resolve(
            library,
            versions,
            installed,
            (f"=={installed}",),
            INSTALLED_SOURCE,
            strict=library == "transformers",
            option=option_name,
            older_ok=True,
        )
        return replace(target, warnings=(*notes, *target.warnings))
    if library == "transformers":
        notes.append(
            f"no version requirement on {library} found (looked for {_sources_text()} at "
            f"{project_root or 'the project root'}) and it is not installed; checking the newest catalogued "
            f"release, {catalog.newest}. Declare the requirement, or set [tool.trainwright] "
            f"{library}-version, to check the releases you use"
        )
    return Target(library, (catalog.newest,), catalog.newest, FALLBACK_SOURCE, tuple(notes))


def _sources_text() -> str:
    from trainwright_lint.requirements import SOURCES_TEXT

    return SOURCES_TEXT


def parse_version_text(text: str, where: str) -> tuple[str, tuple[str, ...]]:
    """(display, PEP 440 alternatives) of a version (``4.45.2``) or range (``>=4.44,<4.46``) given by a
    user in ``where``; raises :class:`TargetError` naming ``where`` when it is neither."""
    shown = text.strip()
    if not shown:
        raise TargetError(f'{where}: is empty (expected e.g. 4.45.2 or ">=4.44,<4.46")')
    if _PLAIN.match(shown):
        from trainwright.catalog.versions import version_key

        try:
            version_key(shown)
        except ValueError:
            pass
        else:
            return shown, (f"=={shown.lstrip('v')}",)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(shown)
    except InvalidSpecifier:
        raise TargetError(
            f'{where}: "{text}" is not a version or a version range (expected e.g. 4.45.2 or ">=4.44,<4.46")'
        ) from None
    return shown, (shown,)


def _resolve(
    library: str,
    versions: tuple[str, ...],
    display: str,
    alternatives: tuple[str, ...],
    source: str,
    *,
    strict: bool,
    option: str,
    older_ok: bool = False,
) -> Target:
    """Map each alternative to catalogued releases (see the module docstring) and take their union.

    With ``older_ok`` (the project's own declaration or installed release, not a value the user typed
    for the linter) a pin entirely below the catalogue is not an error: the release-independent rules
    run against the oldest catalogued release, with one warning naming the pin."""
    chosen: set[str] = set()
    warnings: list[str] = []
    errors: list[str] = []
    below: list[str] = []
    asked = f"{library} {display} ({source})"
    for alternative in alternatives:
        try:
            releases, warning = _releases(library, versions, alternative, asked, strict=strict, option=option)
        except _BelowCatalogue as exc:
            if not older_ok:
                errors.append(str(exc))
            else:
                below.append(str(exc))
            continue
        except TargetError as exc:
            errors.append(str(exc))
            continue
        chosen.update(releases)
        if warning:
            warnings.append(warning)
    if not chosen and below:
        codes = ", ".join(release_dependent())
        warning = (
            f"{asked} is older than the catalogue ({versions[0]}–{versions[-1]}): checking only the rules "
            f"that hold on every release, against {versions[0]}; {codes} are off. Declare a release in "
            "the catalogue to check them"
        )
        return Target(library, (versions[0],), display, source, (warning,), below_catalogue=True)
    if not chosen:
        raise TargetError(errors[0])
    warnings += [f"{e}; that alternative is ignored" for e in errors]
    ordered = tuple(v for v in versions if v in chosen)
    return Target(library, ordered, display, source, tuple(warnings))


def _releases(
    library: str, versions: tuple[str, ...], specifier: str, asked: str, *, strict: bool, option: str
) -> tuple[tuple[str, ...], str | None]:
    from trainwright.catalog.versions import version_key

    exact = _EXACT.match(specifier)
    if exact:
        pinned = exact["version"]
        try:
            version_key(pinned)
        except ValueError:
            raise TargetError(f"{asked}: {pinned!r} is not a PEP 440 version") from None
        inside = tuple(v for v in versions if _same(v, pinned, version_key))
        lower: str | None = pinned
        reaches_below = False
    else:
        from packaging.specifiers import SpecifierSet

        spec = SpecifierSet(specifier)
        inside = tuple(v for v in versions if spec.contains(v, prereleases=True))
        lower = _lower_bound(spec)
        reaches_below = _admits_below(spec, versions[0], version_key)
    if inside:
        return inside, _inside_notes(library, versions, asked, inside, reaches_below, None if exact else spec)
    return _nearest(library, versions, asked, lower, exact is not None, strict=strict, option=option)


def _inside_notes(
    library: str,
    versions: tuple[str, ...],
    asked: str,
    inside: tuple[str, ...],
    reaches_below: bool,
    spec: SpecifierSet | None,
) -> str | None:
    """The warning for a specifier with catalogued releases: the part below the catalogue it drops, and
    an installed newer release it admits that the catalogue does not cover."""
    span = f"{versions[0]}–{versions[-1]}"
    notes = []
    if reaches_below:
        part = inside[0] if len(inside) == 1 else f"{inside[0]}–{inside[-1]}"
        notes.append(
            f"{asked} reaches below the catalogue ({span}); checking only its catalogued part, {part}"
        )
    newer = _uncovered_installed(library, versions[-1])
    if newer is not None and spec is not None and spec.contains(newer, prereleases=True):
        notes.append(f"{asked} admits {newer} (installed), {_not_covered(library, newer, span)}")
    return "; ".join(notes) or None


def _nearest(
    library: str,
    versions: tuple[str, ...],
    asked: str,
    lower: str | None,
    exact: bool,
    *,
    strict: bool,
    option: str,
) -> tuple[tuple[str, ...], str | None]:
    """The release standing for a specifier with no catalogued release (and the warning saying so), or
    the error when none may (``strict``: the user typed it for the linter)."""
    from trainwright.catalog.versions import nearest_at_or_below, version_key

    span = f"{versions[0]}–{versions[-1]}"
    key = version_key(lower) if lower is not None else None
    newest_key = version_key(versions[-1])
    if lower is not None and key is not None and version_key(versions[0]) <= key:
        if key <= newest_key:
            used = nearest_at_or_below(lower, versions)
            what = "is not a catalogued release" if exact else "contains no catalogued release"
            return (used,), (
                f"{asked} {what}; checking {used}, the nearest catalogued release at or below "
                f"{'it' if exact else 'its lower bound'}"
            )
        if key[1][0] == newest_key[1][0]:
            shown = "" if exact else f": its lower bound {lower}"
            return (versions[-1],), (
                f"{asked}{shown} {_not_covered(library, lower, span)}; checking {versions[-1]}, the newest "
                "covered release, instead"
            )
    if not strict:
        edge = versions[0] if key is None or key < newest_key else versions[-1]
        return (edge,), (
            f"{asked} is outside the {library} catalogue ({span}); checking {library} trainer subclasses "
            f"against {edge}"
        )
    error = _BelowCatalogue if key is None or key < version_key(versions[0]) else TargetError
    cover = (
        "" if error is _BelowCatalogue else f" (a newer release: `trainwright catalog add {lower}` covers it)"
    )
    raise error(
        f"{asked} is outside the catalogue ({span}): there is no catalogued release to check against. "
        f"Pass {option} with a release in {span}, or set [tool.trainwright] {library}-version{cover}"
    )


def _uncovered_installed(library: str, newest: str) -> str | None:
    """The installed release when it is newer than every covered one: it could not be added (see
    ``Catalog.problems``), so a range admitting it must say so."""
    from trainwright.catalog import installed_version
    from trainwright.catalog.versions import version_key

    installed = installed_version(library)
    try:
        return installed if installed is not None and version_key(installed) > version_key(newest) else None
    except ValueError:
        return None


def _not_covered(library: str, version: str, span: str) -> str:
    """``is newer than the catalogue (...) and not checked ...; cover it with ...``: the one statement
    every way of reaching past the catalogue ends with (pin, range, ``upgrade --to``)."""
    from trainwright.catalog import load_catalog

    why = "".join(f" ({p})" for p in load_catalog(library).problems)
    flag = "" if library == "transformers" else f" --library {library}"
    return (
        f"is newer than the catalogue ({span}) and not checked{why}; cover it with "
        f"`trainwright catalog add {version}{flag}` (or install it where trainwright runs)"
    )


def _lower_bound(spec: SpecifierSet) -> str | None:
    """The highest lower bound of a specifier set (``>=``, ``>``, ``==``, ``~=``), ``None`` without one."""
    from trainwright.catalog.versions import version_key

    bounds = []
    for clause in spec:
        if clause.operator in (">=", ">", "==", "===", "~="):
            version = clause.version.removesuffix(".*")
            try:
                bounds.append((version_key(version), version))
            except ValueError:
                continue
    return max(bounds)[1] if bounds else None


def _admits_below(spec: SpecifierSet, oldest: str, version_key: Callable[[str], Any]) -> bool:
    """Whether the set admits a release older than ``oldest``, probed at its own bounds, just above
    them and at 0.0.1: an intersection of half-lines, points and exclusions that admits an older
    release admits one of those (exact for the ranges requirements are written with)."""
    oldest_key = version_key(oldest)
    probes = ["0.0.1"]
    for clause in spec:
        version = clause.version.removesuffix(".*")
        probes += [version, f"{version}.1"]
    for probe in probes:
        try:
            below = version_key(probe) < oldest_key
        except ValueError:
            continue
        if below and spec.contains(probe, prereleases=True):
            return True
    return False
