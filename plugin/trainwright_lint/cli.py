"""The ``trainwright`` console script: a thin dispatcher over sub-commands.

Each sub-command lives in its own module under ``trainwright_lint.commands`` and exposes
``register(subparsers)``; the module sets ``func`` on its parser, a callable taking the parsed
namespace and returning the exit status. Keeping the dispatcher this small lets the decision toolkit
(``hooks``, ``explain``) and the linter (``lint``, ``fix``, ``upgrade``) grow independently.

Exit status convention (shared by all sub-commands): 0 success / clean, 1 findings, 2 usage or
internal error.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence

from trainwright_lint import __version__

# Sub-command name -> its module, in the order ``trainwright --help`` lists them.
COMMANDS: dict[str, str] = {
    "hooks": "trainwright_lint.commands.hooks",
    "explain": "trainwright_lint.commands.explain",
    "lint": "trainwright_lint.commands.lint",
    "fix": "trainwright_lint.commands.fix",
    "upgrade": "trainwright_lint.commands.upgrade",
    "catalog": "trainwright_lint.commands.catalog",
    "server": "trainwright_lint.commands.server",
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a sub-command, only that sub-command's module is imported (a
    pre-commit hook runs ``trainwright lint`` on every commit: the catalogue queries and the fixer are
    not its business). ``trainwright --help`` and unknown commands import them all."""
    parser = argparse.ArgumentParser(
        prog="trainwright",
        description="Lint Trainer subclasses and callbacks; query the Trainer API catalogue.",
    )
    parser.add_argument("--version", action="version", version=f"trainwright {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = argv[0] if argv else None
    for name, module_name in COMMANDS.items():
        if chosen in COMMANDS and name != chosen:
            continue
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    return int(func(args))


# Sub-commands that parse a project's files (and keep the trees until they exit).
PARSING_COMMANDS = frozenset({"lint", "fix", "upgrade"})
_M_TRIM_THRESHOLD, _M_TOP_PAD = -1, -2  # glibc's mallopt parameters (malloc.h)


def console() -> None:
    """The ``trainwright`` program: ``main``, then a hard exit once the output is flushed. A lint run
    holds the parsed trees of every file it read; letting the interpreter free them one by one at exit
    costs as much as parsing them did, and nothing is left to clean up (worker processes are joined).
    The cyclic garbage collector stays off for the same reason: the trees hold no cycles, and every
    collection would walk all of them."""
    gc.disable()
    if sys.argv[1:2] and sys.argv[1] in PARSING_COMMANDS:
        keep_freed_heap()
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        code = reader_went_away()
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def reader_went_away() -> int:
    """``trainwright lint | head``: the reader closed the pipe. What it wanted has been printed, so
    this is no error to report (a traceback was); stdout is pointed at ``/dev/null`` so that nothing
    still buffered raises again, and the status is 1, as Python's documentation advises (the full
    output, and so the real status, is unknown)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 1


def keep_freed_heap() -> None:
    """Ask glibc to keep the heap memory a parse frees, for the next file's parse.

    Each ``ast.parse`` frees its parser's working memory at the top of the heap. By default glibc
    hands it back to the system at once, and the next file faults the same pages in again: a seventh
    of a lint run's page faults on TRL's source, and page faults are most of its system time. A CLI
    run owns its process and ends when the lint does, so keeping that memory costs nothing. Only the
    program does this (never library use or flake8); elsewhere than glibc it does nothing."""
    if "CS_GNU_LIBC_VERSION" not in getattr(os, "confstr_names", {}):
        return
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
        import ctypes  # here only: a glibc process that is about to parse many files

        libc = ctypes.CDLL(None)
        libc.mallopt(_M_TRIM_THRESHOLD, 256 << 20)
        libc.mallopt(_M_TOP_PAD, 64 << 20)
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    console()
