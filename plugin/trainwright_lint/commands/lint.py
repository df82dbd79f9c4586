"""``trainwright lint [PATHS]``: lint Trainer subclasses and callbacks of a project.

Exit status: 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from trainwright_lint.config import ConfigError, LintConfig, load_config
from trainwright_lint.discovery import iter_python_files
from trainwright_lint.output import FORMATS
from trainwright_lint.rules import RULES


def _codes(text: str) -> tuple[str, ...]:
    codes = tuple(c.strip().upper() for c in text.replace(" ", ",").split(",") if c.strip())
    for code in codes:
        if not any(rule.startswith(code) for rule in RULES):
            raise argparse.ArgumentTypeError(f"{code!r} matches no rule (known: {', '.join(RULES)})")
    return codes


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "lint",
        help="lint Trainer subclasses and TrainerCallback classes",
        description=(
            "Report Trainer overrides that break or do nothing on the target transformers release, and "
            "logic that belongs in a TrainerCallback. Settings come from [tool.trainwright] in "
            "pyproject.toml; options override them."
        ),
    )
    parser.add_argument("paths", nargs="*", default=["."], help="files or directories (default: .)")
    parser.add_argument(
        "--format", choices=sorted(FORMATS), default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "--select", type=_codes, help="comma-separated code prefixes to report (e.g. TW1,TW301)"
    )
    parser.add_argument("--ignore", type=_codes, help="comma-separated code prefixes to drop")
    parser.add_argument(
        "--transformers-version",
        metavar="VERSION",
        help="target release (default: installed, else newest catalogued)",
    )
    parser.add_argument(
        "--trl-version",
        metavar="VERSION",
        help="target TRL release for TRL trainer subclasses (default: installed, else newest catalogued)",
    )
    parser.add_argument(
        "--file-timeout",
        type=float,
        metavar="SECONDS",
        help="skip a file (reported as TW000) after this many seconds (default: 20; 0: no limit)",
    )
    parser.add_argument("--fix", action="store_true", help="apply safe fixes, then report what is left")
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix: also apply fixes that change behaviour (TW401)",
    )
    parser.add_argument(
        "--trainer-bases",
        type=_names,
        metavar="NAMES",
        help="extra classes to treat as Trainer subclasses (comma-separated)",
    )
    parser.add_argument(
        "--exclude", type=_names, metavar="PATTERNS", help="extra gitignore-style exclude patterns"
    )
    parser.add_argument("--force-exclude", action="store_true", help="apply excludes to files named on the command line too (pre-commit names every changed file)")
    parser.add_argument(
        "-j", "--jobs", type=int, default=None, help="worker processes (default: one per core)"
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.set_defaults(func=run)


def build_config(args: argparse.Namespace) -> LintConfig:
    config = load_config(Path.cwd())
    return config.with_overrides(
        select=args.select,
        ignore=args.ignore,
        transformers_version=args.transformers_version,
        trl_version=getattr(args, "trl_version", None),
        file_timeout=getattr(args, "file_timeout", None),
        trainer_bases=(config.trainer_bases + args.trainer_bases) if args.trainer_bases else None,
        exclude=(config.exclude + args.exclude) if args.exclude else None,
    )


def _progress_line(total: int):  # type: ignore[no-untyped-def]
    """``linting 1234/3000 files...`` on a terminal for runs of more than 50 files, updated in place
    and cleared at the end (called with ``done=-1``); None (no output) otherwise."""
    if total <= 50 or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if done < 0:
            sys.stderr.write("\r\033[K")
        else:
            sys.stderr.write(f"\rlinting {done}/{total} files...")
        sys.stderr.flush()

    return show


def run(args: argparse.Namespace) -> int:
    from trainwright_lint.engine import resolve_target
    from trainwright_lint.runner import lint_files

    try:
        config = build_config(args)
        target = resolve_target(config.transformers_version)
        config = config.with_overrides(transformers_version=target)
        files = [str(p) for p in iter_python_files(args.paths, config.root, config.exclude, args.force_exclude)]
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        print(f"trainwright lint: error: {exc}", file=sys.stderr)
        return 2
    try:
        named = {str(Path(p)) for p in args.paths if Path(p).is_file()}
        explicit = [f for f in files if f in named]
        progress = _progress_line(len(files))
        result = lint_files(files, config, jobs=args.jobs, explicit=explicit, progress=progress)
        if args.fix:
            from trainwright_lint.commands.fix import fix_findings

            report = fix_findings(result.findings, config, unsafe=args.unsafe_fixes)
            for error in report.errors:
                print(f"trainwright lint: {error}", file=sys.stderr)
            if report.changed:
                print(
                    f"fixed {report.applied} finding{'s' if report.applied != 1 else ''} in "
                    f"{len(report.changed)} file{'s' if len(report.changed) != 1 else ''}",
                    file=sys.stderr,
                )
                result = lint_files(files, config, jobs=args.jobs, explicit=explicit, progress=progress)
        if progress is not None:
            progress(-1, len(files))
    except Exception:  # noqa: BLE001 - report, never a bare traceback as "findings"
        print("trainwright lint: internal error, please report it:", file=sys.stderr)
        traceback.print_exc()
        return 2
    for error in result.errors:
        print(f"trainwright lint: warning: {error}", file=sys.stderr)
    FORMATS[args.format](result.findings, sys.stdout)
    if args.format == "text":
        n = len(result.findings)
        print(
            f"{n} finding{'s' if n != 1 else ''} in {result.files_seen} file{'s' if result.files_seen != 1 else ''} "
            f"({result.files_linted} with Trainer subclasses or callbacks; transformers {target})",
            file=sys.stderr,
        )
    if result.findings and not args.exit_zero:
        return 1
    return 0
