"""The effective settings of a run: ``[tool.trainwright]``, the command-line options and the resolved
targets together, and how the front ends show them.

Kept apart from ``config`` (the file) and ``target`` (which releases a requirement means) so that
each of those stays a leaf: this module is the one place that knows both.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from trainwright_lint.config import ConfigError, LintConfig, configured_versions
from trainwright_lint.discovery import find_project_root
from trainwright_lint.target import Target, TargetError, resolve_project_target

_SHOWN_ASCII = str.maketrans({"→": "->", "–": "-"})


def resolve_config_targets(
    config: LintConfig,
    project_root: Path | None,
    *,
    transformers_option: str | None = None,
    trl_option: str | None = None,
) -> LintConfig:
    """``config`` with both targets resolved. ``config.transformers_version``/``trl_version`` hold the
    ``[tool.trainwright]`` values on the way in, and the newest release of each target on the way out
    (what an engine that checks one release per run checks)."""
    transformers = resolve_project_target(
        "transformers", project_root, option=transformers_option, configured=config.transformers_version
    )
    trl = resolve_project_target("trl", project_root, option=trl_option, configured=config.trl_version)
    return replace(
        config,
        transformers_target=transformers,
        trl_target=trl,
        transformers_version=transformers.newest,
        trl_version=trl.newest,
    )


def target_warnings(config: LintConfig) -> list[str]:
    """Warnings of both targets, each once (a file both resolutions read may warn for each)."""
    targets = (config.transformers_target, config.trl_target)
    return list(dict.fromkeys(w for t in targets if t is not None for w in t.warnings))


def summary_text(config: LintConfig) -> str:
    """The targets for a summary line: ``transformers >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2``,
    plus ``; trl ...`` when TRL's target is more than the silent fallback."""
    if config.transformers_target is None:
        text = f"transformers {config.transformers_version}"
    else:
        text = config.transformers_target.describe()
    if config.trl_target is not None and not config.trl_target.is_fallback:
        text += f"; {config.trl_target.describe()}"
    return text


def printable(text: str, stream: TextIO) -> str:
    """``text`` with ``→``/``–`` spelt ``->``/``-`` when ``stream`` cannot encode them (a Windows pipe
    in cp1252, say), so a summary line never raises ``UnicodeEncodeError``."""
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return text.translate(_SHOWN_ASCII)
    return text


# ------------------------------------------------------------------------------------------- flake8


@lru_cache(maxsize=256)
def targets_for_directory(
    directory: str, transformers_option: str | None, trl_option: str | None
) -> tuple[Target, Target] | str:
    """Both targets for a file in ``directory`` (its project root found as the CLI finds it), or the
    error text; cached per process, since flake8 asks once per file (and per root below that: every
    folder of a project shares one resolution, which reads the project's files)."""
    start = Path(directory)
    return _targets_for_root(find_project_root(start) or start, transformers_option, trl_option)


@lru_cache(maxsize=64)
def _targets_for_root(
    root: Path, transformers_option: str | None, trl_option: str | None
) -> tuple[Target, Target] | str:
    try:
        transformers_configured, trl_configured = configured_versions(root)
        return (
            resolve_project_target(
                "transformers",
                root,
                option=transformers_option,
                configured=transformers_configured,
                option_name="--tw-transformers-version",
            ),
            resolve_project_target(
                "trl", root, option=trl_option, configured=trl_configured, option_name="--tw-trl-version"
            ),
        )
    except (TargetError, ConfigError) as exc:
        return str(exc)
