"""``trainwright fix [PATHS]``: apply the linter's safe fixes (libcst, comments and layout kept).

``--diff`` previews without writing; ``--unsafe-fixes`` adds fixes that change behaviour (TW401 event
rename); ``--suggest`` prints, never writes, a ``TrainerCallback`` for each TW2xx finding. Files that do
not parse are left untouched and reported. Exit status: 0 nothing left to report, 1 findings remain
(or, with ``--diff``, there are changes to apply), 2 usage error or a file that could not be fixed.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from trainwright_lint.config import ConfigError, LintConfig
from trainwright_lint.finding import Finding


@dataclass
class FixReport:
    changed: list[str] = field(default_factory=list)  # files changed (or that would change with --diff)
    applied: int = 0
    remaining: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = after.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))


def fix_findings(
    findings: Sequence[Finding],
    config: LintConfig,
    *,
    unsafe: bool = False,
    diff: bool = False,
    out: TextIO | None = None,
) -> FixReport:
    """Fix every file that has a fixable finding; ``findings`` come from a project-wide lint."""
    from trainwright_lint.fixes import FixError, config_linter, fix_bytes, has_fixable
    from trainwright_lint.fixes.fileio import atomic_write, read_bytes

    out = out or sys.stdout
    report = FixReport()
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_path[f.path].append(f)
    for path in sorted(by_path):
        if not has_fixable(by_path[path], unsafe):
            report.remaining += by_path[path]
            continue
        try:
            data = read_bytes(path)
            outcome = fix_bytes(data, path, config_linter(path, config), unsafe=unsafe)
        except (FixError, OSError) as exc:
            report.errors.append(f"{path}: {exc}")
            report.remaining += by_path[path]
            continue
        report.applied += len(outcome.applied)
        report.remaining += outcome.remaining
        if not outcome.changed:
            continue
        report.changed.append(path)
        if diff:
            out.write(_diff(path, outcome.original, outcome.fixed))
        else:
            atomic_write(path, outcome.fixed)
    report.remaining.sort(key=Finding.sort_key)
    return report


def print_suggestions(findings: Sequence[Finding], out: TextIO) -> int:
    from trainwright_lint.fixes.fileio import read_bytes
    from trainwright_lint.suggest import SUGGESTED_CODES, suggest

    shown: dict[str, list[Finding]] = {}  # suggestion text -> the findings it answers (one class for all)
    for f in findings:
        if f.code not in SUGGESTED_CODES:
            continue
        try:
            source = read_bytes(f.path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        text = suggest(source, f)
        if text is not None:
            shown.setdefault(text, []).append(f)
    for text, answered in shown.items():
        for f in answered:
            out.write(f"# {f.path}:{f.line}: {f.code} {f.message}\n")
        out.write(f"{text}\n")
    return len(shown)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from trainwright_lint.commands.lint import _codes, _names

    parser = subparsers.add_parser(
        "fix",
        help="apply safe fixes (TW301, TW302, TW303, TW402) to Trainer subclasses and callbacks",
        description=(
            "Rewrite what can be fixed mechanically, keeping comments and formatting: TW301 add the "
            "parameters the Trainer passes (and forward them to super()), TW302 drop the argument the "
            "base method rejects, TW303 self.tokenizer -> self.processing_class, TW402 add **kwargs. "
            "--unsafe-fixes also renames a misspelt callback event (TW401)."
        ),
    )
    parser.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")
    parser.add_argument("--diff", action="store_true", help="print a unified diff instead of writing")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change behaviour")
    parser.add_argument(
        "--suggest",
        action="store_true",
        help="print a TrainerCallback for each TW2xx finding (never written)",
    )
    parser.add_argument("--select", type=_codes, help="comma-separated code prefixes to fix/report")
    parser.add_argument("--ignore", type=_codes, help="comma-separated code prefixes to skip")
    parser.add_argument("--transformers-version", metavar="VERSION", help="target release")
    parser.add_argument("--trl-version", metavar="VERSION", help="target TRL release")
    parser.add_argument("--trainer-bases", type=_names, metavar="NAMES", help="extra Trainer base classes")
    parser.add_argument("--exclude", type=_names, metavar="PATTERNS", help="extra exclude patterns")
    parser.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too (pre-commit names every changed file)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from trainwright_lint.commands.lint import build_config
    from trainwright_lint.discovery import iter_python_files
    from trainwright_lint.engine import resolve_target
    from trainwright_lint.output import FORMATS
    from trainwright_lint.runner import lint_files

    try:
        config = build_config(args)
        config = config.with_overrides(transformers_version=resolve_target(config.transformers_version))
        files = [str(p) for p in iter_python_files(args.paths, config.root, config.exclude, args.force_exclude)]
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        print(f"trainwright fix: error: {exc}", file=sys.stderr)
        return 2
    named = {str(Path(p)) for p in args.paths if Path(p).is_file()}
    result = lint_files(files, config, jobs=args.jobs, explicit=[f for f in files if f in named])
    if args.suggest:
        shown = print_suggestions(result.findings, sys.stdout)
        print(f"{shown} callback suggestion{'s' if shown != 1 else ''} (nothing written)", file=sys.stderr)
        return 0
    report = fix_findings(result.findings, config, unsafe=args.unsafe_fixes, diff=args.diff)
    for error in [*result.errors, *report.errors]:
        print(f"trainwright fix: {error}", file=sys.stderr)
    if report.remaining:
        FORMATS["text"](report.remaining, sys.stdout)
    verb = "would fix" if args.diff else "fixed"
    print(
        f"{verb} {report.applied} finding{'s' if report.applied != 1 else ''} in {len(report.changed)} "
        f"file{'s' if len(report.changed) != 1 else ''}; {len(report.remaining)} left",
        file=sys.stderr,
    )
    if report.errors:
        return 2
    if report.remaining or (args.diff and report.changed):
        return 1
    return 0
