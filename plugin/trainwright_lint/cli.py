"""The ``trainwright`` console script: a thin dispatcher over sub-commands.

Each sub-command lives in its own module under ``trainwright_lint.commands`` and exposes
``register(subparsers)``; the module sets ``func`` on its parser, a callable taking the parsed
namespace and returning the exit status. Keeping the dispatcher this small lets the decision toolkit
(``hooks``, ``explain``) and the linter (``lint``, ``fix``) grow independently.

Exit status convention (shared by all sub-commands): 0 success / clean, 1 findings, 2 usage or
internal error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from trainwright_lint import __version__

# Sub-command modules, in the order they are listed by ``trainwright --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "trainwright_lint.commands.hooks",
    "trainwright_lint.commands.explain",
    "trainwright_lint.commands.lint",
    "trainwright_lint.commands.fix",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trainwright",
        description="Lint Trainer subclasses and callbacks; query the Trainer API catalogue.",
    )
    parser.add_argument("--version", action="version", version=f"trainwright {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # a sub-command not shipped (yet) in this build
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    return int(func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
