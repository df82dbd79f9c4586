"""What breaks when a project moves from its current transformers range to a newer release.

``trainwright upgrade --to 5.25.0`` answers "can we move to transformers 5?". The project is linted
over its current range *and* every catalogued release after it up to the new one, in one run. A
finding that holds somewhere on that path but nowhere on the current range is a **break**: code that
works today and fails after the move. Its ``releases`` say where it holds, so the first of them is
the release where it starts. Findings that already hold on the current range are not breaks (``lint``
reports them), and neither are version-independent ones (TW2xx advice holds on every release).

Whether a break has a fix is decided at the new release alone, by a second lint with that target:
after the move, only the new release matters, and a fix that is right there (dropping
``metrics=`` from ``_save_checkpoint``) may well be wrong on the old range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from trainwright.catalog import load_catalog
from trainwright_lint.configuration import LintConfig
from trainwright_lint.configuration.target import Target, TargetError, resolve_project_target
from trainwright_lint.engine import OF_THE_RANGE
from trainwright_lint.finding import Finding
from trainwright_lint.rules import fixable
from trainwright_lint.runner import LintResult, lint_files


@dataclass(frozen=True)
class Break:
    """A finding that starts on the way to the new release."""

    finding: Finding  # from the lint over the whole path (its message says where it holds)
    starts: str  # the first release of the path where it holds
    fix: str  # "safe" / "unsafe" (a fix at the new release, of that applicability) or ""
    fix_note: str  # why there is no fix, when the rule has one


@dataclass
class UpgradePlan:
    current: Target  # the project's range today
    to: Target  # the release moved to
    path: tuple[str, ...]  # the catalogued releases after the current range, up to and including `to`
    breaks: list[Break]
    already: int  # findings that hold on the current range too (not breaks: `lint` shows them)
    result: LintResult  # the lint at the new release (what `--fix` fixes)
    new_config: LintConfig


class AlreadyThere(TargetError):
    """``--to`` names a release the current target already checks: nothing changes on the way (exit 0)."""


def asked_version(to: Target) -> str:
    """The release as the user typed it after ``--to`` (``5.25.0``), never the one it was mapped to."""
    return to.specifier.strip().lstrip("=").strip()


def releases_after(current: Target, to: Target) -> tuple[str, ...]:
    """The catalogued releases newer than the current range's newest, up to the new release."""
    versions = list(load_catalog("transformers").versions)
    start, end = versions.index(current.newest), versions.index(to.newest)
    asked = asked_version(to)
    if end <= start and to.newest != asked and to.warnings:
        raise TargetError(f"--to {asked}: {to.warnings[0]}")  # beyond the catalogue: say how to cover it
    if to.newest in current.releases:
        raise AlreadyThere(
            f"transformers {asked} is already in the current target ({current.describe()}): moving there "
            "changes nothing; `trainwright lint` shows what holds on it"
        )
    if end <= start:
        raise TargetError(
            f"--to {asked}: transformers {asked} is not newer than {current.newest}, the newest release of "
            f"the current target ({current.describe()}); upgrade checks a move to a newer release"
        )
    return tuple(versions[start + 1 : end + 1])


def target_of(to_text: str) -> Target:
    """The release ``--to`` names (one release: a project moves to a version, not to a range)."""
    target = resolve_project_target("transformers", None, option=to_text, option_name="--to")
    if len(target.releases) != 1:
        target = replace(target, releases=(target.newest,))
    return target


def plan_upgrade(
    files: Sequence[str],
    config: LintConfig,
    to: Target,
    *,
    jobs: int | None = None,
    explicit: Sequence[str] = (),
) -> UpgradePlan:
    current = config.transformers_target
    if current is None:
        raise TargetError("the current transformers target is unknown; pass --transformers-version")
    path = releases_after(current, to)
    through = Target(
        library="transformers",
        releases=(*current.releases, *path),
        specifier=f"{current.specifier} then {to.newest}",
        source="upgrade path",
    )
    whole = lint_files(files, _with_target(config, through), jobs=jobs, explicit=explicit)
    new_config = _with_target(config, to)
    at_new = lint_files(files, new_config, jobs=jobs, explicit=explicit)
    fixes = {_place(f): f for f in at_new.findings}
    today = set(current.releases)
    breaks, already = [], 0
    for f in whole.findings:
        if not f.releases:
            continue  # version-independent: not about the move
        if today & set(f.releases):
            already += 1
            continue
        starts = min(f.releases, key=path.index)
        # "breaks on 4.46.0–5.24.0" is about the path here, not about the project's range.
        f = replace(f, message=f.message.replace(OF_THE_RANGE, ""))
        twin = fixes.get(_place(f))
        has_fix = twin is not None and twin.fix is not None
        breaks.append(
            Break(
                finding=f,
                starts=starts,
                fix=fixable().get(f.code, "") if has_fix else "",
                fix_note=twin.fix_note if twin is not None else "",
            )
        )
    breaks.sort(key=lambda b: b.finding.sort_key())
    return UpgradePlan(current, to, path, breaks, already, at_new, new_config)


def _with_target(config: LintConfig, target: Target) -> LintConfig:
    return replace(config, transformers_target=target, transformers_version=target.newest)


def _place(f: Finding) -> tuple[object, ...]:
    return (f.path, f.code, f.line, f.column, f.method)
