"""The lint-then-fix loop, above both the engine and the fixer.

``lint_files`` lints the project; each finding already carries its fix (an edit the rule checked to be
valid on every release of the target range). ``fix_findings`` applies them file by file: read a
snapshot, apply the edits with libcst (``fixes``), re-lint the new text against the same project model
between passes, and write only if the file is still as it was read (``fixes.fileio``). Only files that
have findings are touched, and findings exist only for the files that were given, so a base class in
another file is never rewritten.
"""

from __future__ import annotations

import ast
import difflib
import io
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from trainwright_lint import noqa, prefilter, supervisor
from trainwright_lint.analysis.workspace import Workspace, parse_source
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_tree, text_needs
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import FixError, FixOutcome, Linter, fix_bytes, has_fixable
from trainwright_lint.fixes.fileio import WriteError, read_bytes, read_snapshot, write_fixed
from trainwright_lint.project.model import ProjectModel
from trainwright_lint.rules import suggested
from trainwright_lint.runner import LintResult, timeout_problem, withhold_fixes
from trainwright_lint.suggest import no_move, preview, withheld
from trainwright_lint.supervisor import Beat


@dataclass
class FixReport:
    changed: list[str] = field(default_factory=list)  # files changed (or that would change with --diff)
    applied: int = 0
    remaining: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # files that could not be read, fixed or written
    output: str = ""  # what a supervised child would have written to ``out`` (the parent writes it)


def relinter(path: str, config: LintConfig, workspace: Workspace) -> Linter:
    """``lint(code, tree)`` for ``path`` as ``trainwright lint`` would report it: against the run's
    project model, ``# noqa`` honoured, each finding with its fix."""
    words = prefilter.gate_words(config.trainer_bases)

    def lint(code: str, tree: ast.Module | None = None) -> list[Finding]:
        """Raises ``SyntaxError`` when ``code`` does not parse (and no ``tree`` is given)."""
        lines = code.splitlines()
        if noqa.file_is_skipped(lines, code) or not prefilter.worth_linting(code, words):
            return []
        tree = tree if tree is not None else parse_source(code, path)
        return withhold_fixes(
            noqa.filter_noqa(lint_tree(tree, code, path, config, workspace=workspace), lines), code
        )

    return lint


def workspace_of(result: LintResult | None, config: LintConfig) -> Workspace:
    """The run's parsed files and model when the run kept them, else a fresh model over the project."""
    if result is not None and result.workspace is not None:
        return result.workspace
    model = result.model if result is not None and result.model is not None else None
    model = model or ProjectModel(str(config.root), extra_bases=config.trainer_bases)
    return Workspace(model, tracked=text_needs(config).tracked)


def fix_within_limit(
    findings: Sequence[Finding],
    config: LintConfig,
    *,
    result: LintResult | None = None,
    unsafe: bool = False,
    diff: bool = False,
    out: TextIO | None = None,
    shown_path: Callable[[str], str] = str,
) -> FixReport:
    """``fix_findings`` under the per-file time limit (``--file-timeout``), as lint has it: a forked
    child fixes while this process holds each file's deadline; a file that runs past it is killed,
    reported as not fixed, and the rest fixed by a fresh child (``supervisor``). A file is written
    atomically or not at all, so a killed fix leaves it as it was."""
    out = out or sys.stdout
    if config.file_timeout <= 0 or not supervisor.available():
        return fix_findings(
            findings, config, result=result, unsafe=unsafe, diff=diff, out=out, shown_path=shown_path
        )

    def in_child(beat: Beat, skipped: Mapping[str, str]) -> FixReport:
        buffer = io.StringIO()  # printed by the parent: a killed child's diffs must not show twice
        report = fix_findings(
            findings,
            config,
            result=result,
            unsafe=unsafe,
            diff=diff,
            out=buffer,
            shown_path=shown_path,
            beat=beat,
            skipped=skipped,
        )
        report.output = buffer.getvalue()
        return report

    report: FixReport = supervisor.run(in_child, config.file_timeout, timeout_problem)
    out.write(report.output)
    return report


def fix_pass(
    config: LintConfig,
    *,
    unsafe: bool = False,
    diff: bool = False,
    shown_path: Callable[[str], str] = str,
) -> Callable[[LintResult, Beat | None, Mapping[str, str]], FixReport]:
    """The fix as ``lint_files``'s follow-up: run where the lint's trees are (no file is parsed twice)
    under the lint's per-file time limit. What it would print is in the report's ``output``."""

    def then(result: LintResult, beat: Beat | None, skipped: Mapping[str, str]) -> FixReport:
        buffer = io.StringIO()
        options = {"result": result, "unsafe": unsafe, "diff": diff, "out": buffer, "shown_path": shown_path}
        if beat is None:
            report = fix_within_limit(result.findings, config, **options)  # type: ignore[arg-type]
        else:
            report = fix_findings(result.findings, config, beat=beat, skipped=skipped, **options)  # type: ignore[arg-type]
        report.output = buffer.getvalue()
        return report

    return then


def fix_findings(
    findings: Sequence[Finding],
    config: LintConfig,
    *,
    result: LintResult | None = None,
    unsafe: bool = False,
    diff: bool = False,
    out: TextIO | None = None,
    shown_path: Callable[[str], str] = str,
    beat: Beat | None = None,
    skipped: Mapping[str, str] | None = None,
) -> FixReport:
    """Fix every file that has a fixable finding; ``findings`` come from a project-wide lint (``result``).

    A file that cannot be read, fixed or written is reported in ``errors`` (its path, what went wrong
    and what to do) with its findings left as they were, and the run goes on with the next file: one
    read-only folder or full disk must not stop the rest. The file is read once into a snapshot and
    written only if it is still in that state (``fixes.fileio``)."""
    out = out or sys.stdout
    report = FixReport()
    workspace = workspace_of(result, config)
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_path[f.path].append(f)
    for path in sorted(by_path):
        known = by_path[path]
        if not has_fixable(known, unsafe):
            report.remaining += known
            continue
        key = f"fix:{path}"
        if skipped and key in skipped:
            report.errors.append(f"{path}: {skipped[key]}; not fixed")
            report.remaining += known
            continue
        if beat is not None:
            beat(key)
        outcome = _fix_file(
            path, known, config, workspace, result, unsafe=unsafe, write=not diff, errors=report.errors
        )
        if outcome is None:
            report.remaining += known
            continue
        report.applied += len(outcome.applied)
        report.remaining += outcome.remaining
        if not outcome.changed:
            continue
        report.changed.append(path)
        if diff:
            out.write(unified_diff(shown_path(path), outcome.original, outcome.fixed))
    if beat is not None:
        beat(None)
    report.remaining.sort(key=Finding.sort_key)
    return report


def _fix_file(
    path: str,
    known: list[Finding],
    config: LintConfig,
    workspace: Workspace,
    result: LintResult | None,
    *,
    unsafe: bool,
    write: bool,
    errors: list[str],
) -> FixOutcome | None:
    """Fix one file from a snapshot and (with ``write``) write it back if it is still in that state; None,
    with what went wrong and what to do in ``errors``, when it cannot be read, fixed or written."""
    unit = workspace.units.get(path)
    try:
        named = result.named.get(path, path) if result is not None else path
        snapshot = read_snapshot(named, root=config.root)  # refuses a link leading out of the project
        outcome = fix_bytes(
            snapshot.data,
            path,
            relinter(path, config, workspace),
            unsafe=unsafe,
            first=(result.linted[path], known) if result is not None and path in result.linted else None,
            prior=(unit.source, unit.tree) if unit is not None else None,
        )
    except FixError as exc:
        errors.append(f"{path}: {exc}")
        return None
    except WriteError as exc:  # before OSError: it names the path and the reason itself
        errors.append(str(exc))
        return None
    except OSError as exc:
        errors.append(f"{path}: cannot read: {exc.strerror or exc}; not fixed")
        return None
    if outcome.changed and write:
        try:
            write_fixed(snapshot, outcome.fixed)
        except WriteError as exc:
            errors.append(str(exc))
            return None
    return outcome


def unified_diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = after.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, fromfile=f"a/{path}", tofile=f"b/{path}"))


@dataclass
class PreviewReport:
    """What ``fix --suggest`` showed: moves previewed, findings with no mechanical move, errors."""

    previewed: int = 0
    withheld: int = 0
    errors: list[str] = field(default_factory=list)


def preview_moves(
    findings: Sequence[Finding],
    result: LintResult,
    out: TextIO,
    shown_path: Callable[[str], str] = str,
) -> PreviewReport:
    """``fix --suggest``: per finding of a rule that moves code into a callback, the unified diff of its
    move fix applied alone to the file (``fix_bytes``, the writer ``--unsafe-fixes`` uses), or one line
    saying why there is no mechanical move (``suggest.withheld``). Nothing is written."""
    report = PreviewReport()
    for f in sorted(findings, key=Finding.sort_key):
        if f.code not in suggested():
            continue
        reason = withheld(f)
        diff = None if reason is not None else _one_move(f, result, report.errors)
        if diff is None:
            report.withheld += 1
            out.write(no_move(f, reason or "the file changed since it was linted", shown_path))
            continue
        report.previewed += 1
        out.write(preview(f, unified_diff(shown_path(f.path), *diff), shown_path))
    return report


def _no_second_pass(code: str, tree: ast.Module | None = None, /) -> list[Finding]:
    """The preview's re-lint: nothing, so that ``fix_bytes`` stops after this one move."""
    return []


def _one_move(f: Finding, result: LintResult, errors: list[str]) -> tuple[bytes, bytes] | None:
    """The file's bytes before and after ``f``'s move alone, or None when it cannot be applied (the
    file changed since the lint, or it cannot be read or fixed: said in ``errors``)."""
    digest = result.linted.get(f.path)
    try:
        data = read_bytes(result.named.get(f.path, f.path))
        outcome = fix_bytes(
            data,
            f.path,
            _no_second_pass,
            unsafe=True,
            first=(digest, [f]) if digest is not None else None,
        )
    except (FixError, OSError) as exc:
        errors.append(f"{f.path}: {exc}")
        return None
    return (data, outcome.fixed) if outcome.changed else None
