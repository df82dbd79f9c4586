"""Configuration: what one run checks and how, in one package for every front end.

- ``settings``: :class:`LintConfig`, the frozen settings the engine, the runner and the fixer read;
- ``pyproject``: ``[tool.trainwright]``, read and validated (an unknown key or code is an error);
- ``target``: what a version or a range means in catalogued releases (:class:`Target`);
- ``resolve``: the one target resolution, used by the CLI, the flake8 plugin, in-memory lint and
  ``hooks``/``explain``, with the warnings each target carries (:class:`Targets`).
"""

from __future__ import annotations

from trainwright_lint.configuration.pyproject import load_config
from trainwright_lint.configuration.resolve import (
    Targets,
    project_targets,
    resolve_targets,
    settings_for_paths,
    targets_for_file,
    targets_of,
    with_targets,
)
from trainwright_lint.configuration.settings import ConfigError, LintConfig, known_codes
from trainwright_lint.configuration.target import Target, TargetError

__all__ = [
    "ConfigError",
    "LintConfig",
    "Target",
    "TargetError",
    "Targets",
    "known_codes",
    "load_config",
    "project_targets",
    "resolve_targets",
    "settings_for_paths",
    "targets_for_file",
    "targets_of",
    "with_targets",
]
