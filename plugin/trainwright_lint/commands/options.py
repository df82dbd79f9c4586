"""What ``lint``, ``fix`` and ``upgrade`` share: their command-line options, the settings built from
them (by ``configuration.settings_for_paths``: the one resolution), and how warnings and errors are
printed. One module, so that the commands never import each other.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from trainwright_lint.configuration import (
    ConfigError,
    LintConfig,
    known_codes,
    settings_for_paths,
    targets_of,
)
from trainwright_lint.discovery import discovery_warnings, iter_python_files
from trainwright_lint.finding import NOT_LINTED, Finding
from trainwright_lint.output import FORMAT_ALIASES
from trainwright_lint.runner import for_display
from trainwright_lint.terminal import GLUE, Terminal, printable, shown_safely, width_is_known

Progress = Callable[[int, int], None]


def codes(text: str) -> tuple[str, ...]:
    """``--select``/``--ignore``: comma-separated codes or prefixes, each matching a known code."""
    found = tuple(c.strip().upper() for c in text.replace(" ", ",").split(",") if c.strip())
    known = known_codes()
    for code in found:
        if not any(k.startswith(code) for k in known):
            raise argparse.ArgumentTypeError(f"{code!r} matches no rule (known: {', '.join(known)})")
    return found


def names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def add_common_options(parser: argparse.ArgumentParser, *, paths_help: str = "files or directories") -> None:
    """The options every linting command takes."""
    parser.add_argument("paths", nargs="*", default=["."], help=f"{paths_help} (default: .)")
    parser.add_argument(
        "--select", type=codes, help="comma-separated code prefixes to report (e.g. TW1,TW301)"
    )
    parser.add_argument("--ignore", type=codes, help="comma-separated code prefixes to drop")
    parser.add_argument(
        "--preview", action="store_true", default=None,
        help="also run the preview rules (test-split precision under 0.90; docs/rules/index.md)",
    )  # fmt: skip
    parser.add_argument(
        "--transformers-version",
        metavar="VERSION",
        help="target release or range, e.g. 4.45.2 or '>=4.44,<4.46' (default: [tool.trainwright], else "
        "the project's requirement, else installed, else newest catalogued)",
    )
    parser.add_argument(
        "--trl-version",
        metavar="VERSION",
        help="target TRL release or range for TRL trainer subclasses (default: as for transformers)",
    )
    parser.add_argument(
        "--trainer-bases",
        type=names,
        metavar="NAMES",
        help="extra classes to treat as Trainer subclasses (comma-separated)",
    )
    parser.add_argument(
        "--exclude", type=names, metavar="PATTERNS", help="extra gitignore-style exclude patterns"
    )
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply excludes to files named on the command line too (pre-commit names every changed file)",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=None, help="worker processes (default: one per core)"
    )
    parser.add_argument(
        "--file-timeout",
        type=float,
        metavar="SECONDS",
        help=f"skip a file (reported as {NOT_LINTED}) after this many seconds (default: 20; 0: no limit)",
    )


def add_output_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    """``--output-format`` (ruff's name) and ``--format`` (the older one, where ``text`` is ``full``)."""
    parser.add_argument(
        "--output-format",
        choices=formats,
        help="full (default): each finding's headline, then help: and note: lines fitted to the terminal; "
        "concise: one line per finding with the whole message, for tools"
        + ("; json (ruff's fields), sarif, github (annotations)" if "json" in formats else ""),
    )
    parser.add_argument(
        "--format",
        choices=sorted({"text", *formats} - {"full"}),
        help="the same as --output-format, with text for full",
    )


def add_editor_options(parser: argparse.ArgumentParser) -> None:
    """``-q`` and ``--stdin-filename``: what editors and scripts calling ``lint``/``fix`` need."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print the findings (and errors) only: no summary, no warnings, no progress",
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="PATH",
        help="read the source from stdin and lint it as the file PATH (its project's settings apply; "
        "PATHS are ignored); with fix, print the fixed source on stdout and the rest on stderr",
    )


def shown_path(path: str) -> str:
    """A file as a person at the current folder would type it (ruff's rule): relative to the current
    folder when the file is inside it, else absolute. JSON and SARIF keep paths relative to the project
    root instead (their consumers resolve them against it: ``%SRCROOT%``, the schema)."""
    real = os.path.realpath(path)
    here = os.path.realpath(os.getcwd())
    if real == here or real.startswith(here.rstrip(os.sep) + os.sep):
        return os.path.relpath(real, here)
    return real


def for_output(findings: Sequence[Finding], config: LintConfig, fmt: str) -> list[Finding]:
    """``findings`` with their paths as format ``fmt`` shows them: for people (full, concise, github)
    relative to the current folder (:func:`shown_path`), for tools (json, sarif) relative to the
    project root (``runner.for_display``)."""
    if fmt in ("json", "sarif"):
        return for_display(findings, config)
    shown: dict[str, str] = {}
    for f in findings:
        if f.path not in shown:
            shown[f.path] = shown_path(f.path)
    return sorted((replace(f, path=shown[f.path]) for f in findings), key=Finding.sort_key)


def output_format(args: argparse.Namespace) -> str:
    """The format asked for by either option (``--output-format`` wins), ``full`` by default."""
    chosen = args.output_format or args.format or "full"
    return FORMAT_ALIASES.get(chosen, chosen)


def build_config(args: argparse.Namespace) -> LintConfig:
    """The run's settings (``configuration.settings_for_paths``) from the parsed options; raises
    ``ConfigError``/``TargetError``, both ``ValueError``: exit status 2."""
    return settings_for_paths(
        getattr(args, "paths", None) or ["."],
        transformers_option=args.transformers_version,
        trl_option=getattr(args, "trl_version", None),
        select=args.select,
        ignore=args.ignore,
        preview=getattr(args, "preview", None),
        file_timeout=getattr(args, "file_timeout", None),
        more_trainer_bases=args.trainer_bases or (),
        more_exclude=args.exclude or (),
    )


def tell(*statements: str) -> None:
    """Each statement on stderr, spelt in what stderr can encode (control characters of a file
    name escaped: ``terminal.shown_safely``); wrapped, continuation lines
    indented, when its width is known (``COLUMNS`` or a terminal), else one line each."""
    term = Terminal.detect(sys.stderr) if width_is_known(sys.stderr) else None
    for text in map(shown_safely, statements):
        lines = (
            term.wrap(text, indent="    ", hang=0, lead="") if term is not None else [text.replace(GLUE, " ")]
        )
        for line in lines:
            print(printable(line, sys.stderr), file=sys.stderr)


def report_warnings(command: str, warnings: list[str]) -> None:
    """``trainwright <command>: warning: ...`` on stderr, one statement each."""
    tell(*(f"trainwright {command}: warning: {warning}" for warning in warnings))


def report_error(command: str, text: str) -> None:
    tell(f"trainwright {command}: error: {text}")


def checked_against(config: LintConfig) -> str:
    """The statement after every summary: which releases were checked, and why those (each target
    kept on one line when the statement wraps)."""
    targets = targets_of(config)
    shown = [targets.transformers] + ([] if targets.trl.is_fallback else [targets.trl])
    return "checked against " + "; ".join(t.describe().replace(" ", GLUE) for t in shown)


def prepare_run(args: argparse.Namespace, command: str) -> tuple[LintConfig, list[str], list[str]] | None:
    """Settings, the files to lint and those named explicitly, with the warnings printed; ``None``
    after printing the error when the run cannot start (exit status 2)."""
    try:
        config = build_config(args)
        files = [
            str(p) for p in iter_python_files(args.paths, config.root, config.exclude, args.force_exclude)
        ]
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        report_error(command, str(exc))
        return None
    found = discovery_warnings(args.paths, files, config.root, config.exclude, args.force_exclude)
    if not getattr(args, "quiet", False):
        report_warnings(command, [*targets_of(config).warnings, *found])
    named = {str(Path(p)) for p in args.paths if Path(p).is_file()}
    return config, files, [f for f in files if f in named]


def progress_line(total: int, quiet: bool = False) -> Progress | None:
    """``linting 1234/3000 files...`` on a terminal for runs of more than 50 files, updated in place
    and cleared at the end (called with ``done=-1``); None (no output) otherwise, or with ``-q``."""
    if quiet or total <= 50 or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if done < 0:
            sys.stderr.write("\r\033[K")
        else:
            sys.stderr.write(f"\rlinting {done}/{total} files...")
        sys.stderr.flush()

    return show


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"
