"""``trainwright upgrade --to VERSION [PATHS]``: what breaks when the project moves to transformers VERSION.

Per file: each break, the release where it starts and whether a fix exists at VERSION; ``--fix``
applies the safe ones (the fixed code then targets VERSION: raise the project's requirement with it).

Exit status: 0 nothing breaks, 1 something breaks (after ``--fix``: something is left), 2 usage,
configuration or internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from itertools import groupby
from typing import Any, TextIO

from trainwright_lint.commands.options import (
    add_common_options,
    plural,
    prepare_run,
    report_error,
    report_warnings,
)
from trainwright_lint.configuration import LintConfig
from trainwright_lint.configuration.target import TargetError
from trainwright_lint.output.rule_meta import rule_url
from trainwright_lint.runner import display_path
from trainwright_lint.terminal import printable
from trainwright_lint.upgrade import AlreadyThere, Break, UpgradePlan, asked_version, plan_upgrade, target_of


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "upgrade",
        help="what breaks when moving to a newer transformers release",
        description=(
            "List what breaks between the project's current transformers target (its requirement, "
            "[tool.trainwright] or --transformers-version) and the release given with --to: per file, "
            "each break, the release where it starts and whether a fix exists there. The question "
            "'can we move to transformers 5?' is `trainwright upgrade --to 5.25.0`."
        ),
    )
    add_common_options(parser)
    parser.add_argument("--to", required=True, metavar="VERSION", help="the transformers release to move to")
    parser.add_argument("--fix", action="store_true", help="apply the fixes that are safe on the new release")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    prepared = prepare_run(args, "upgrade")
    if prepared is None:
        return 2
    config, files, explicit = prepared
    try:
        to = target_of(args.to)
        plan = plan_upgrade(files, config, to, jobs=args.jobs, explicit=explicit)
    except AlreadyThere as exc:
        print(printable(f"trainwright upgrade: {exc}", sys.stderr), file=sys.stderr)
        return 0
    except TargetError as exc:
        report_error("upgrade", str(exc))
        return 2
    except Exception:  # noqa: BLE001 - report, never a bare traceback as "breaks"
        print("trainwright upgrade: internal error, please report it:", file=sys.stderr)
        traceback.print_exc()
        return 2
    report_warnings("upgrade", list(to.warnings))  # a release past the catalogue: checked as which, and why
    if args.format == "json":
        json.dump(as_json(plan, config), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_text(plan, config, sys.stdout)
    left = len(plan.breaks)
    if args.fix and plan.breaks:
        from trainwright_lint.driver import fix_within_limit  # libcst: only when fixing (see commands.fix)

        # Every safe fix at the new release, breaks or not: after the move that release is the target.
        report = fix_within_limit(plan.result.findings, plan.new_config, result=plan.result)
        for error in report.errors:
            print(f"trainwright upgrade: {error}", file=sys.stderr)
        if report.errors:
            return 2
        changed = set(report.changed)
        left = sum(1 for b in plan.breaks if not (b.fix == "safe" and b.finding.path in changed))
        print(
            f"fixed {plural(report.applied, 'finding')} in {plural(len(changed), 'file')} for transformers "
            f"{plan.to.newest} ({plural(left, 'break')} left); the fixed code targets that release: raise the "
            "project's requirement on transformers to match",
            file=sys.stderr,
        )
    return 1 if left else 0


def _header(plan: UpgradePlan) -> str:
    asked = asked_version(plan.to)
    checked = "" if asked == plan.to.newest else f" (checked as {plan.to.newest}, the newest covered release)"
    origin = "".join(f", {p}" for p in plan.to.provenance)
    return f"{plan.current.describe()}, moving to {asked}{checked}{origin}"


def _fix_text(b: Break) -> str:
    if b.fix == "safe":
        return "fix: safe (--fix)"
    if b.fix == "unsafe":
        return "fix: unsafe (trainwright fix --unsafe-fixes)"
    return "no fix"


def print_text(plan: UpgradePlan, config: LintConfig, out: TextIO) -> None:
    out.write(printable(f"# {_header(plan)}\n", out))
    for path, breaks in groupby(plan.breaks, key=lambda b: b.finding.path):
        out.write(f"\n{display_path(path, config)}\n")
        for b in breaks:
            f = b.finding
            out.write(
                printable(f"  {f.line}:{f.column} {f.code} starts at {b.starts}; {_fix_text(b)}\n", out)
            )
            out.write(printable(f"      {f.message}\n", out))
    files = len({b.finding.path for b in plan.breaks})
    fixable = sum(1 for b in plan.breaks if b.fix == "safe")
    summary = (
        f"{plural(len(plan.breaks), 'break')} in {plural(files, 'file')} on the way to transformers {asked_version(plan.to)} "
        f"({fixable} with a safe fix; {len(plan.path)} releases checked after {plan.current.newest})"
    )
    if plan.already:
        summary += (
            f"; {plural(plan.already, 'finding')} already hold on the current range (see `trainwright lint`)"
        )
    print(printable(summary, sys.stderr), file=sys.stderr)


def as_json(plan: UpgradePlan, config: LintConfig) -> dict[str, Any]:
    return {
        "current": plan.current.describe(),
        "to": asked_version(plan.to),
        "checked_as": plan.to.newest,
        "releases_checked": list(plan.path),
        "already_on_current_range": plan.already,
        "breaks": [
            {
                "code": b.finding.code,
                "message": b.finding.message,
                "filename": display_path(b.finding.path, config),
                "location": {"row": b.finding.line, "column": b.finding.column},
                "end_location": {"row": b.finding.end_line, "column": b.finding.end_column},
                "starts": b.starts,
                "fix": b.fix or None,
                "fix_note": b.fix_note or None,
                "url": rule_url(b.finding.code),
            }
            for b in plan.breaks
        ],
    }
