"""``trainwright fix [PATHS]``: apply the linter's safe fixes (libcst, comments and layout kept).

``--diff`` previews without writing; ``--unsafe-fixes`` adds fixes that change behaviour; ``--suggest``
prints, never writes, the move each TW2xx finding's unsafe fix would make (that one move's diff). Which
rule has which fix is the rule's own declaration (``Rule.fix_applicability``, ``fix_title``,
``suggestion``): the help lists them from the registry. A fix is applied only if it is valid on every
release of the target range. Files that do not parse are left
untouched and reported. Exit status: 0 nothing left to report, 1 findings remain (or, with ``--diff``,
there are changes to apply), 2 usage error or a file that could not be fixed or written.
"""

from __future__ import annotations

import argparse
import sys

from trainwright_lint.commands.options import (
    add_common_options,
    add_editor_options,
    add_output_options,
    checked_against,
    for_output,
    output_format,
    plural,
    prepare_run,
    shown_path,
    tell,
)
from trainwright_lint.output import FORMATS
from trainwright_lint.rules import fixes, suggested
from trainwright_lint.rules.base import SAFE, UNSAFE
from trainwright_lint.runner import display_path, lint_files
from trainwright_lint.terminal import shown_safely


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    safe = fixes(SAFE)
    parser = subparsers.add_parser(
        "fix",
        help=f"apply safe fixes ({', '.join(code for code, _ in safe)}) to Trainer subclasses and callbacks",
        description=(
            "Rewrite what can be fixed mechanically, keeping comments and formatting, when the fixed code "
            f"is valid on every release of the target range: {_listed(safe)}. "
            f"--unsafe-fixes also applies the fixes that change behaviour: {_listed(fixes(UNSAFE))}."
        ),
    )
    add_common_options(parser)
    add_output_options(parser, ["full", "concise"])
    add_editor_options(parser)
    parser.add_argument("--diff", action="store_true", help="print a unified diff instead of writing")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that change behaviour")
    parser.add_argument(
        "--suggest",
        action="store_true",
        help=f"preview the callback move of each {'/'.join(suggested())} finding: that move's diff (never written)",
    )
    parser.set_defaults(func=run)


def _listed(fixes: list[tuple[str, str]]) -> str:
    """``TW301 add ..., TW302 drop ...``: each fix as its rule declares it."""
    return ", ".join(f"{code} {title}" for code, title in fixes)


def run(args: argparse.Namespace) -> int:
    # The fixer brings libcst; imported when a fix runs, so that registering this command (which every
    # `trainwright` invocation does) does not cost `trainwright lint` the libcst import.
    from trainwright_lint.commands.stdin_input import fix_stdin
    from trainwright_lint.driver import FixReport, fix_pass, preview_moves

    if args.stdin_filename and not args.suggest:
        return fix_stdin(args, "fix")
    prepared = prepare_run(args, "fix")
    if prepared is None:
        return 2
    config, files, explicit = prepared
    then = None

    def shown(path: str) -> str:
        return shown_safely(shown_path(path))

    if not args.suggest:
        then = fix_pass(config, unsafe=args.unsafe_fixes, diff=args.diff, shown_path=shown)
    result = lint_files(files, config, jobs=args.jobs, explicit=explicit, keep_model=True, then=then)
    if args.suggest:
        # Root-relative here, as the diffs of ``--diff`` name the files.
        shown_moves = preview_moves(
            result.findings, result, sys.stdout, lambda p: shown_safely(display_path(p, config))
        )
        sys.stdout.flush()
        tell(*(f"trainwright fix: {error}" for error in [*result.errors, *shown_moves.errors]))
        if not args.quiet:
            tell(
                f"{plural(shown_moves.previewed, 'callback move')} previewed, "
                f"{shown_moves.withheld} without a mechanical move (nothing written)"
            )
        return 0
    report: FixReport = result.followup
    sys.stdout.write(report.output)
    tell(*(f"trainwright fix: {error}" for error in [*result.errors, *report.errors]))
    if report.remaining:
        fmt = output_format(args)
        FORMATS[fmt](for_output(report.remaining, config, fmt), sys.stdout)
    sys.stdout.flush()  # the summary (stderr) after the last finding, never inside it
    verb = "would fix" if args.diff else "fixed"
    if not args.quiet:
        tell(
            f"{verb} {plural(report.applied, 'finding')} in {plural(len(report.changed), 'file')}; "
            f"{len(report.remaining)} left",
            checked_against(config),
        )
    if report.errors:
        return 2
    if report.remaining or (args.diff and report.changed):
        return 1
    return 0
