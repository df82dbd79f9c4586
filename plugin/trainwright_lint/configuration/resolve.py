"""The one target resolution: which transformers and TRL releases a run checks, for every front end.

The CLI (:func:`settings_for_paths`), the flake8 plugin (:func:`targets_for_file`), in-memory lint
(:func:`targets_of`, what the engine asks) and the decision commands (``hooks``/``explain``, through
:func:`project_targets`) all call :func:`resolve_targets`, so a project's pin means the same releases
whichever way it is linted. The result is a :class:`Targets`: both targets, each carrying its own
warnings (a fallback, a remapped version, a range reaching below the catalogue), which every front
end prints the same way; a target no catalogued release can stand for is a ``TargetError``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from trainwright_lint.configuration.pyproject import configured_versions, load_config
from trainwright_lint.configuration.settings import ConfigError, LintConfig, check_file_timeout
from trainwright_lint.configuration.target import Target, TargetError, resolve_project_target
from trainwright_lint.discovery import config_start, find_project_root


@dataclass(frozen=True)
class Targets:
    """The transformers and TRL targets of one run, as resolved together."""

    transformers: Target
    trl: Target

    @property
    def warnings(self) -> tuple[str, ...]:
        """Both targets' warnings, each once (a file both resolutions read may warn for each)."""
        return tuple(dict.fromkeys((*self.transformers.warnings, *self.trl.warnings)))

    def describe(self) -> str:
        """For a summary line: ``transformers >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2``, plus
        ``; trl ...`` when TRL's target is more than the silent fallback."""
        text = self.transformers.describe()
        if not self.trl.is_fallback:
            text += f"; {self.trl.describe()}"
        return text


def resolve_targets(
    project_root: Path | None,
    *,
    transformers_option: str | None = None,
    trl_option: str | None = None,
    configured: tuple[str | None, str | None] = (None, None),
    option_prefix: str = "--",
) -> Targets:
    """Both targets by the order of :mod:`.target`: the options (spelt ``{option_prefix}transformers-
    version`` in messages), the ``configured`` ``[tool.trainwright]`` values, then what the project at
    ``project_root`` declares (``None``: read no project files), the installed release, the newest
    catalogued one. Raises ``TargetError`` when no catalogued release can stand for what was asked."""
    asked = {"transformers": (transformers_option, configured[0]), "trl": (trl_option, configured[1])}
    transformers, trl = (
        resolve_project_target(
            library,
            project_root,
            option=option,
            configured=value,
            option_name=f"{option_prefix}{library}-version",
        )
        for library, (option, value) in asked.items()
    )
    return Targets(transformers, trl)


def with_targets(config: LintConfig, targets: Targets) -> LintConfig:
    """``config`` carrying ``targets``; its ``transformers_version``/``trl_version`` then hold the newest
    release of each (what code that checks one release checks)."""
    return replace(
        config,
        transformers_target=targets.transformers,
        trl_target=targets.trl,
        transformers_version=targets.transformers.newest,
        trl_version=targets.trl.newest,
    )


def targets_of(config: LintConfig) -> Targets:
    """The targets of ``config``: each one a front end resolved, else (in-memory lint, tests) its
    version resolved as an option would be, without reading project files."""
    return Targets(
        config.transformers_target or _in_memory("transformers", config.transformers_version),
        config.trl_target or _in_memory("trl", config.trl_version),
    )


@lru_cache(maxsize=32)
def _in_memory(library: str, version: str | None) -> Target:
    return resolve_project_target(library, None, option=version, option_name=f"{library}_version")


# ----------------------------------------------------------------------------------------- front ends


def settings_for_paths(
    paths: Sequence[str],
    *,
    transformers_option: str | None = None,
    trl_option: str | None = None,
    more_trainer_bases: Sequence[str] = (),
    more_exclude: Sequence[str] = (),
    **overrides: object,
) -> LintConfig:
    """The settings of a CLI run over ``paths``: ``[tool.trainwright]`` of the linted project, the
    command-line ``overrides`` (``None`` values ignored), the ``more_*`` names added to the file's
    lists, and the resolved targets. Raises ``ConfigError``/``TargetError`` (both ``ValueError``:
    exit status 2)."""
    if overrides.get("file_timeout") is not None:
        check_file_timeout(overrides["file_timeout"], "--file-timeout")
    start = config_start(list(paths) or ["."])
    config = load_config(start)
    config = config.with_overrides(
        **overrides,
        trainer_bases=(*config.trainer_bases, *more_trainer_bases) if more_trainer_bases else None,
        exclude=(*config.exclude, *more_exclude) if more_exclude else None,
    )
    marked = find_project_root(start)
    root = marked or _no_marker_root(start)
    if marked is None and config.root != root:
        config = config.with_overrides(root=root)
    targets = resolve_targets(
        root,
        transformers_option=transformers_option,
        trl_option=trl_option,
        configured=(config.transformers_version, config.trl_version),
    )
    return with_targets(config, targets)


def _no_marker_root(start: Path) -> Path:
    """Without a pyproject.toml, setup.cfg, setup.py or .git, the working directory when the linted
    paths are inside it (paths then read as they were typed), else where they are."""
    cwd = Path.cwd().resolve()
    start = start.resolve()
    return cwd if start == cwd or cwd in start.parents else start


def project_targets(start: Path, transformers_option: str | None = None) -> Targets:
    """The targets of the project around ``start`` (its root found as the CLI finds it), for the
    commands that describe releases rather than lint files (``hooks``, ``explain``)."""
    root = find_project_root(start) or start.resolve()
    return resolve_targets(
        root, transformers_option=transformers_option, configured=configured_versions(root)
    )


def targets_for_file(path: str, transformers_option: str | None, trl_option: str | None) -> Targets:
    """Both targets for the file at ``path``, from its project root (the flake8 plugin's ``--tw-*``
    options first); cached per directory and root, since flake8 asks once per file and resolving
    reads the project's files. Raises ``TargetError`` (a ``ConfigError`` is reported as one)."""
    directory = os.path.dirname(os.path.abspath(path)) if os.path.exists(path) else "."
    outcome = _for_directory(directory, transformers_option, trl_option)
    if isinstance(outcome, str):
        raise TargetError(outcome)
    return outcome


@lru_cache(maxsize=256)
def _for_directory(directory: str, transformers_option: str | None, trl_option: str | None) -> Targets | str:
    start = Path(directory)
    return _for_root(find_project_root(start) or start, transformers_option, trl_option)


@lru_cache(maxsize=64)
def _for_root(root: Path, transformers_option: str | None, trl_option: str | None) -> Targets | str:
    """The targets, or the error's text (an outcome, so that a bad pin is also resolved only once)."""
    try:
        return resolve_targets(
            root,
            transformers_option=transformers_option,
            trl_option=trl_option,
            configured=configured_versions(root),
            option_prefix="--tw-",
        )
    except (TargetError, ConfigError) as exc:
        return str(exc)
