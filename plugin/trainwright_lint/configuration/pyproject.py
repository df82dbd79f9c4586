"""``[tool.trainwright]`` in ``pyproject.toml``: read and validated into a :class:`LintConfig`.

Keys (all optional)::

    [tool.trainwright]
    select = ["TW1", "TW3"]            # code prefixes to report (default: every rule)
    ignore = ["TW201"]                 # code prefixes to drop (wins over select)
    per-file-ignores = { "tests/*" = ["TW2"] }
    trainer-bases = ["mylib.BaseTrainer"]   # extra classes to treat as Trainer subclasses
    transformers-version = "4.57.6"    # target release or range (">=4.44,<4.46"); default: the
                                       # project's requirement, else installed, else newest catalogued
    trl-version = "1.16.0"             # target TRL release or range for TRL trainer subclasses (same rule)
    file-timeout = 20                  # seconds per file before it is skipped as TW000 (0: no limit)
    exclude = ["legacy/", "*_pb2.py"]  # gitignore-style patterns, on top of .gitignore

Validated as strictly as the command line: an unknown key, a code or prefix that matches no rule
(``select = ["TW999"]`` would otherwise turn every rule off), a bad version or a value of the wrong
type is a :class:`ConfigError` (exit status 2) that names the file and the key.

Why our own loader: flake8 only reads INI files, and a pre-commit hook must not need flake8 config to
agree with the CLI. The flake8 plugin takes the same settings from ``--tw-*`` options instead, and only
the target versions from here (:func:`configured_versions`).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from trainwright_lint.configuration.settings import ConfigError, LintConfig, check_file_timeout, known_codes
from trainwright_lint.configuration.target import TargetError, parse_version_text
from trainwright_lint.discovery import find_project_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ImportError:  # pragma: no cover
        tomllib = None  # type: ignore[assignment]


KNOWN_KEYS = frozenset(
    {
        "select",
        "ignore",
        "per-file-ignores",
        "trainer-bases",
        "transformers-version",
        "trl-version",
        "file-timeout",
        "exclude",
        "preview",
    }
)


def _flag(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"[tool.trainwright] {key} must be true or false, not {value!r}")
    return value


def _codes(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.replace(",", " ").split() if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'[tool.trainwright] {key} must be a list of codes such as ["TW101", "TW2"]')
    out = tuple(v.strip().upper() for v in value if v.strip())
    known = known_codes()
    for code in out:
        if not re.fullmatch(r"TW[0-9]{0,3}", code):
            raise ConfigError(
                f'[tool.trainwright] {key}: "{code}" is not a trainwright code (TW + up to 3 digits)'
            )
        if not any(k.startswith(code) for k in known):
            raise ConfigError(
                f'[tool.trainwright] {key}: "{code}" matches no rule (known: {", ".join(known)})'
            )
    return out


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[tool.trainwright] {key} must be a list of strings")
    return tuple(value)


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.trainwright]`` table,
    else the nearest one at all (it still marks the project root)."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    nearest: Path | None = None
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            nearest = nearest or candidate
            if b"[tool.trainwright" in candidate.read_bytes():
                return candidate
    return nearest


def _unknown_keys(table: dict[str, Any]) -> None:
    unknown = sorted(set(table) - KNOWN_KEYS)
    if not unknown:
        return
    import difflib

    hints = []
    for key in unknown:
        close = difflib.get_close_matches(key.replace("_", "-"), sorted(KNOWN_KEYS), n=1)
        if close:
            hints.append(f'"{key}": did you mean "{close[0]}"?')
    hint = f" ({'; '.join(hints)})" if hints else ""
    raise ConfigError(
        f"[tool.trainwright] has unknown key(s) {', '.join(unknown)}{hint}; "
        f"known keys: {', '.join(sorted(KNOWN_KEYS))}"
    )


def _version(table: dict[str, Any], key: str, example: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        hint = (
            " (quote it: TOML reads an unquoted 4.45 as a number)" if isinstance(value, (int, float)) else ""
        )
        raise ConfigError(f'[tool.trainwright] {key} must be a string such as "{example}"{hint}')
    try:
        parse_version_text(value, f"[tool.trainwright] {key}")
    except TargetError as exc:
        raise ConfigError(str(exc)) from None
    return value


def from_table(table: dict[str, Any], root: Path) -> LintConfig:
    _unknown_keys(table)
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError('[tool.trainwright] per-file-ignores must be a table: { "tests/*" = ["TW2"] }')
    version = _version(table, "transformers-version", "4.57.6")
    trl_version = _version(table, "trl-version", "1.16.0")
    timeout = check_file_timeout(table.get("file-timeout", 20.0), "[tool.trainwright] file-timeout")
    return LintConfig(
        trl_version=trl_version,
        file_timeout=timeout,
        select=_codes(table.get("select", []), "select"),
        ignore=_codes(table.get("ignore", []), "ignore"),
        per_file_ignores=tuple((str(k), _codes(v, f'per-file-ignores "{k}"')) for k, v in pfi.items()),
        trainer_bases=_strings(table.get("trainer-bases", []), "trainer-bases"),
        transformers_version=version,
        exclude=_strings(table.get("exclude", []), "exclude"),
        root=root,
        preview=_flag(table.get("preview", False), "preview"),
    )


def _read_table(pyproject: Path) -> dict[str, Any] | None:
    """The ``[tool.trainwright]`` table of ``pyproject`` (``None`` when it has none)."""
    if tomllib is None:  # pragma: no cover
        raise ConfigError(
            "reading pyproject.toml on Python 3.10 needs the 'tomli' package: pip install tomli"
        )
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from exc
    except (RecursionError, MemoryError) as exc:  # tomllib recurses once per level of nesting
        raise ConfigError(
            f"{pyproject}: cannot read: nested too deeply ({exc.__class__.__name__}); flatten the value"
        ) from None
    tool = data.get("tool", {})
    table = tool.get("trainwright") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.trainwright] must be a table")
    return table


def load_config(start: Path) -> LintConfig:
    """Read ``[tool.trainwright]`` from the nearest pyproject.toml that has one (defaults when there is
    none). ``root`` (what ``exclude`` and ``per-file-ignores`` patterns are relative to) is that file's
    directory, else the project root (:func:`trainwright_lint.discovery.find_project_root`)."""
    pyproject = find_pyproject(start)
    table = _read_table(pyproject) if pyproject is not None else None
    if pyproject is None or table is None:
        base = start.resolve()
        return LintConfig(root=find_project_root(base) or (base if base.is_dir() else base.parent))
    try:
        return from_table(table, pyproject.parent)
    except ConfigError as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None


def configured_versions(start: Path) -> tuple[str | None, str | None]:
    """``(transformers-version, trl-version)`` from the ``[tool.trainwright]`` that applies at ``start``,
    read alone: the flake8 plugin takes its other settings from flake8, so a key it does not use must
    not stop it. A bad version is still a :class:`ConfigError`."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return None, None
    table = _read_table(pyproject) or {}
    try:
        return (
            _version(table, "transformers-version", "4.57.6"),
            _version(table, "trl-version", "1.16.0"),
        )
    except ConfigError as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None
