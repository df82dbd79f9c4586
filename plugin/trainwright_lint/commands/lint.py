"""``trainwright lint [PATHS]``: lint Trainer subclasses and callbacks of a project.

Exit status: 0 no findings, 1 findings, 2 usage, configuration or internal error, or a file that
``--fix`` could not write.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Any, TextIO

from trainwright_lint.commands.options import (
    add_common_options,
    add_editor_options,
    add_output_options,
    checked_against,
    for_output,
    output_format,
    plural,
    prepare_run,
    progress_line,
    tell,
)
from trainwright_lint.configuration import LintConfig
from trainwright_lint.finding import Finding
from trainwright_lint.output import FORMATS, write_findings
from trainwright_lint.runner import LintResult, display_path, lint_files
from trainwright_lint.terminal import shown_safely


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="lint Trainer subclasses and TrainerCallback classes",
        description=(
            "Report Trainer overrides that break or do nothing on the target transformers releases, and "
            "logic that belongs in a TrainerCallback. Settings come from [tool.trainwright] in "
            "pyproject.toml; options override them."
        ),
    )
    add_common_options(parser)
    add_output_options(parser, list(FORMATS))
    add_editor_options(parser)
    parser.add_argument("--fix", action="store_true", help="apply safe fixes, then report what is left")
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix: also apply fixes that change behaviour (`trainwright fix --help` lists them)",
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument(
        "--statistics",
        action="store_true",
        help="print findings and CPU time per rule, the classes the rules looked at, and the classes that "
        "look like Trainer subclasses or callbacks but whose bases could not be resolved (with the reason), "
        "instead of the findings (a JSON object with --format json)",
    )
    parser.set_defaults(func=run)


def print_statistics(result: LintResult, config: LintConfig, as_json: bool, out: TextIO) -> None:
    """What ``--statistics`` shows: per rule the findings and CPU seconds (a fact shared by several
    rules counts for the first that needed it), the classes by role, and the unresolved look-alikes."""
    counts = Counter(f.code for f in result.findings)
    codes = sorted(set(counts) | set(result.rule_seconds))
    rules = {
        c: {"count": counts.get(c, 0), "seconds": round(result.rule_seconds.get(c, 0.0), 4)} for c in codes
    }
    classes = [
        {"path": display_path(r.path, config), "line": r.line, "class": r.name, "role": r.role}
        for r in result.classes
    ]
    unresolved: list[dict[str, Any]] = [
        {"path": display_path(r.path, config), "line": r.line, "class": r.name, "reason": r.role}
        for r in result.unresolved
    ]
    if as_json:
        json.dump({"rules": rules, "classes": classes, "unresolved": unresolved}, out, indent=2)
        out.write("\n")
        return
    out.write(f"{'code':<8}{'findings':>9}{'cpu s':>9}\n")
    out.writelines(f"{code:<8}{row['count']:>9}{row['seconds']:>9.3f}\n" for code, row in rules.items())
    by_role = Counter(c["role"] for c in classes)
    shown = ", ".join(f"{n} {role}{'s' if n != 1 else ''}" for role, n in sorted(by_role.items())) or "none"
    out.write(f"\nclasses the rules looked at: {shown}\n")
    if unresolved:
        out.write(
            f"\n{len(unresolved)} class{'es' if len(unresolved) != 1 else ''} look like Trainer subclasses or "
            "callbacks but could not be resolved (not linted; add the base to trainer-bases if it is one):\n"
        )
        out.writelines(
            f"  {shown_safely(u['path'])}:{u['line']}: {u['class']}: {u['reason']}\n" for u in unresolved
        )


def with_text_edits(result: LintResult, config: LintConfig) -> list[Finding]:
    """The findings with each fix spelt as text edits (JSON ``fix.edits``): the files are fixed in
    memory as ``trainwright fix`` would fix them (``output.text_edits``). Imported here: the fixer
    brings libcst, which only this format needs."""
    from trainwright_lint.driver import relinter, workspace_of
    from trainwright_lint.fixes.fileio import read_bytes
    from trainwright_lint.output.text_edits import spell_fixes

    workspace = workspace_of(result, config)
    return spell_fixes(
        result.findings,
        lambda path: read_bytes(result.named.get(path, path)),
        lambda path: relinter(path, config, workspace),
    )


def run(args: argparse.Namespace) -> int:
    if args.stdin_filename:
        # Imported here: the fixer (and libcst) come with it, which a plain lint never loads.
        from trainwright_lint.commands.stdin_input import fix_stdin, lint_stdin

        return fix_stdin(args, "lint") if args.fix else lint_stdin(args)
    prepared = prepare_run(args, "lint")
    if prepared is None:
        return 2
    config, files, explicit = prepared
    write_errors = False
    try:
        progress = progress_line(len(files), args.quiet)
        result = lint_files(
            files,
            config,
            jobs=args.jobs,
            explicit=explicit,
            progress=progress,
            keep_model=args.fix or output_format(args) == "json",
        )
        if args.fix:
            # Imported here, not at the top: the fixer brings libcst, whose import costs about half of
            # a plain lint's CPU time on a mid-size project (a pre-commit hook pays it on every commit).
            from trainwright_lint.driver import fix_within_limit

            report = fix_within_limit(result.findings, config, result=result, unsafe=args.unsafe_fixes)
            tell(*(f"trainwright lint: {error}" for error in report.errors))
            write_errors = bool(report.errors)
            if report.changed and not args.quiet:
                tell(f"fixed {plural(report.applied, 'finding')} in {plural(len(report.changed), 'file')}")
            if report.changed:
                result = lint_files(files, config, jobs=args.jobs, explicit=explicit, progress=progress)
        if progress is not None:
            progress(-1, len(files))
    except Exception:  # noqa: BLE001 - report, never a bare traceback as "findings"
        import traceback  # only on this path: its import is a tenth of the start-up it would cost

        print("trainwright lint: internal error, please report it:", file=sys.stderr)
        traceback.print_exc()
        return 2
    if not args.quiet:
        tell(*(f"trainwright lint: warning: {error}" for error in result.errors))
    show_result(args, result, config)
    if write_errors:
        return 2
    return 1 if result.findings and not args.exit_zero else 0


def show_result(args: argparse.Namespace, result: LintResult, config: LintConfig) -> None:
    """The findings (or ``--statistics``) on stdout in the format asked for; for people, the summary
    on stderr after them, unless ``-q``."""
    fmt = output_format(args)
    if args.statistics:
        print_statistics(result, config, fmt == "json", sys.stdout)
        return
    findings = with_text_edits(result, config) if fmt == "json" else result.findings
    write_findings(fmt, for_output(findings, config, fmt), sys.stdout, str(config.root))
    if fmt in ("full", "concise") and not args.quiet:
        sys.stdout.flush()  # the summary (stderr) comes after the last finding, never inside it
        tell(summary(result), checked_against(config))


def summary(result: LintResult) -> str:
    """``N findings in M files (K with Trainer subclasses or callbacks)``. K counts the files holding
    a class the rules looked at (``result.classes``), not ``files_linted``: a script that only calls
    ``Trainer(...)`` is linted (for its arguments) but holds no subclass."""
    with_classes = len({c.path for c in result.classes})
    return (
        f"{plural(len(result.findings), 'finding')} in {plural(result.files_seen, 'file')} "
        f"({with_classes} with Trainer subclasses or callbacks)"
    )
