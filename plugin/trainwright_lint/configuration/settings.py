"""The settings of one run (:class:`LintConfig`): frozen data that every layer below the front ends
reads, and nothing else. Reading them (``pyproject``) and resolving their targets (``resolve``) live
beside this module, so that the engine, the runner and the rules depend on this leaf alone.
"""

from __future__ import annotations

import fnmatch
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trainwright_lint.configuration.target import Target, release_dependent
from trainwright_lint.finding import NOT_LINTED
from trainwright_lint.noqa import UNUSED_NOQA


class ConfigError(ValueError):
    """A configuration value the linter cannot use; the message names the key and the fix."""


#: the longest per-file limit accepted (about 11.6 days): the supervisor waits with ``select``, whose
#: timeout overflows the platform's ``time_t`` near 1e10 s; 0 already means "no limit"
MAX_FILE_TIMEOUT = 1e6


def check_file_timeout(value: object, where: str) -> float:
    """``value`` as a per-file limit in seconds, or a ``ConfigError`` naming ``where`` it came from.
    NaN, infinities and values past :data:`MAX_FILE_TIMEOUT` are refused: ``1e10`` ended in a
    traceback (``OverflowError`` in ``select``) and NaN slipped past a ``< 0`` test."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if number is None or not math.isfinite(number) or not 0 <= number <= MAX_FILE_TIMEOUT:
        raise ConfigError(
            f"{where} must be a number of seconds from 0 (no limit) to {MAX_FILE_TIMEOUT:g}, not {value!r}"
        )
    return float(number)


@dataclass(frozen=True)
class LintConfig:
    """Every setting of one run, from ``[tool.trainwright]`` and the command line, resolved once:
    frozen, because the worker processes and the fixer must all see the same settings."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    trainer_bases: tuple[str, ...] = ()
    transformers_version: str | None = None
    exclude: tuple[str, ...] = ()
    root: Path = field(default_factory=Path.cwd)
    trl_version: str | None = None
    file_timeout: float = 20.0
    # Rules whose precision on the blind test split is under 0.90 (``Rule.preview``) run only with
    # ``--preview`` / ``preview = true`` (ruff's model); docs/rules/index.md says which.
    preview: bool = False
    # The resolved targets (configuration.resolve); transformers_version/trl_version then hold the
    # newest release of each, for code that checks one release.
    transformers_target: Target | None = None
    trl_target: Target | None = None

    def code_enabled(self, code: str, path: str | None = None) -> bool:
        """flake8 semantics: a code is on if it matches a select prefix and no (longer) ignore prefix.
        A project pinned below the catalogue has the release-dependent rules off whatever is selected."""
        target = self.transformers_target
        if target is not None and target.below_catalogue and code.startswith(release_dependent()):
            return False
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        if any(code.startswith(p) for p in self.ignore):
            return False
        if path is not None and self.per_file_ignores:
            rel = _relative(path, self.root)
            for pattern, codes in self.per_file_ignores:
                if _path_matches(rel, pattern) and any(code.startswith(c) for c in codes):
                    return False
        return True

    def with_overrides(self, **changes: Any) -> LintConfig:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _relative(path: str, root: Path) -> str:
    p = Path(path)
    try:
        p = Path(os.path.realpath(p)).relative_to(root.resolve())  # a looping link: as it is, no error
    except ValueError:
        pass
    return p.as_posix()


def _path_matches(rel: str, pattern: str) -> bool:
    pattern = pattern.strip()
    pattern = pattern.removeprefix("./")
    if fnmatch.fnmatch(rel, pattern):
        return True
    # "tests/" or "tests" matches everything below it; "*.py" matches the basename anywhere.
    stripped = pattern.rstrip("/")
    if rel == stripped or rel.startswith(stripped + "/"):
        return True
    return "/" not in pattern and fnmatch.fnmatch(rel.rsplit("/", 1)[-1], pattern)


# Not rules, but selectable: a file skipped (parse error, timeout), an unused noqa code.
PSEUDO_CODES = (NOT_LINTED, UNUSED_NOQA)


def known_codes() -> tuple[str, ...]:
    """Every code a ``select``/``ignore`` prefix may match: the rule registry plus ``TW000``."""
    from trainwright_lint.rules import RULES

    return (*PSEUDO_CODES, *sorted(RULES))
