"""``--stdin-filename PATH``: lint (or fix) the text on stdin as if it were the file ``PATH``.

Why: an editor lints the buffer being typed, not the file on disk, and formats-on-save by piping the
buffer through ``trainwright fix``. The text is linted exactly as the project run would lint ``PATH``:
the settings of the project ``PATH`` is in (its range, ``[tool.trainwright]``, per-file ignores), its
bases read on demand from the files beside it, ``# noqa`` honoured. Nothing is written: ``fix`` prints
the fixed text on stdout (the text unchanged when it cannot be fixed, so that a buffer piped through
it is never lost) and what is left on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

from trainwright_lint import noqa, prefilter
from trainwright_lint.analysis.workspace import parse_source
from trainwright_lint.commands.options import (
    build_config,
    checked_against,
    for_output,
    output_format,
    plural,
    report_error,
    report_warnings,
    shown_path,
    tell,
)
from trainwright_lint.configuration import ConfigError, LintConfig, targets_of
from trainwright_lint.driver import relinter, unified_diff
from trainwright_lint.engine import lint_tree, single_file_workspace
from trainwright_lint.finding import Finding, not_linted
from trainwright_lint.fixes import FixError, Linter, fix_bytes
from trainwright_lint.output import FORMATS, write_findings
from trainwright_lint.output.text_edits import spell_fixes
from trainwright_lint.runner import noqa_applied
from trainwright_lint.sourcefile import decode_source
from trainwright_lint.terminal import shown_safely


@dataclass
class StdinSource:
    """The bytes read from stdin and the file they stand for (absolute, as the runner names files)."""

    path: str
    data: bytes

    @classmethod
    def read(cls, name: str) -> StdinSource:
        return cls(os.path.abspath(name), sys.stdin.buffer.read())

    def lint(self, config: LintConfig) -> list[Finding]:
        """The findings of the text, as ``trainwright lint PATH`` would report them for that text; a
        text that cannot be decoded or parsed is one TW000, as for a file."""
        text = decode_source(self.data)
        if text is None:
            return [not_linted(self.path, "cannot decode the text on stdin (see the file's coding line)")]
        try:
            findings = self._findings(text, config)
        except SyntaxError as exc:
            return [
                not_linted(
                    self.path, f"cannot parse ({exc.__class__.__name__}: {exc.msg})", exc.lineno, exc.offset
                )
            ]
        except (ValueError, RecursionError, MemoryError) as exc:
            return [not_linted(self.path, f"cannot parse ({exc.__class__.__name__})")]
        return sorted(findings, key=Finding.sort_key)

    def _findings(self, text: str, config: LintConfig) -> list[Finding]:
        """As the project run's worker lints a file (``runner``): ``# flake8: noqa`` and the prefilter
        honoured, ``# noqa`` applied and its unused codes reported (TW001)."""
        lines = text.splitlines()
        if noqa.file_is_skipped(lines, text) or not prefilter.worth_linting(
            text, prefilter.gate_words(config.trainer_bases)
        ):
            return []
        workspace = single_file_workspace(self.path, config)
        found = lint_tree(parse_source(text, self.path), text, self.path, config, workspace=workspace)
        return noqa_applied(found, text, lines, self.path, config)

    def linter(self, config: LintConfig) -> Linter:
        """What the fixer re-lints the text with (``driver.relinter``, on this file's workspace)."""
        return relinter(self.path, config, single_file_workspace(self.path, config))


def _settings(args: argparse.Namespace, command: str) -> LintConfig | None:
    """The settings of the project ``--stdin-filename`` is in, as ``trainwright <command> PATH`` would
    build them; ``None`` after printing the error (exit status 2)."""
    args.paths = [args.stdin_filename]
    try:
        config = build_config(args)
    except (ConfigError, ValueError) as exc:
        report_error(command, str(exc))
        return None
    if not args.quiet:
        report_warnings(command, list(targets_of(config).warnings))
    return config


def lint_stdin(args: argparse.Namespace) -> int:
    """``lint --stdin-filename PATH``: the findings of stdin's text in the format asked for."""
    config = _settings(args, "lint")
    if config is None:
        return 2
    source = StdinSource.read(args.stdin_filename)
    findings = source.lint(config)
    fmt = output_format(args)
    if fmt == "json":
        findings = spell_fixes(findings, lambda _: source.data, lambda _: source.linter(config))
    write_findings(fmt, for_output(findings, config, fmt), sys.stdout, str(config.root))
    if fmt in ("full", "concise") and not args.quiet:
        sys.stdout.flush()
        tell(
            f"{plural(len(findings), 'finding')} in stdin ({shown_path(source.path)})",
            checked_against(config),
        )
    return 1 if findings and not getattr(args, "exit_zero", False) else 0


def fix_stdin(args: argparse.Namespace, command: str) -> int:
    """``fix --stdin-filename PATH`` (and ``lint --fix``): the fixed text on stdout (with ``--diff``,
    the diff), the findings left on stderr. When the text cannot be fixed it is printed unchanged:
    an editor that replaces its buffer with stdout must never get less than it sent."""
    config = _settings(args, command)
    if config is None:
        return 2
    source = StdinSource.read(args.stdin_filename)
    diff = getattr(args, "diff", False)
    try:
        outcome = fix_bytes(source.data, source.path, source.linter(config), unsafe=args.unsafe_fixes)
    except FixError as exc:
        if not diff:
            sys.stdout.buffer.write(source.data)
        report_error(command, f"{shown_path(source.path)}: {exc}")
        return 2
    if diff:
        sys.stdout.write(unified_diff(shown_safely(shown_path(source.path)), outcome.original, outcome.fixed))
    else:
        sys.stdout.buffer.write(outcome.fixed)
    sys.stdout.flush()
    fmt = output_format(args)
    renderer = FORMATS["concise" if fmt not in ("full", "concise") else fmt]
    renderer(for_output(outcome.remaining, config, fmt), sys.stderr)
    if not args.quiet:
        verb = "would fix" if diff else "fixed"
        tell(
            f"{verb} {plural(len(outcome.applied), 'finding')}; {len(outcome.remaining)} left",
            checked_against(config),
        )
    if outcome.remaining and not getattr(args, "exit_zero", False):
        return 1
    return 1 if diff and outcome.changed else 0
