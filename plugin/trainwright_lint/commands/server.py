"""``trainwright server``: the language server over stdio (``trainwright_lint.server``).

pygls is an optional dependency (the ``server`` extra): the pre-commit hook and the flake8 plugin
never need it. Without it the command says which extra to install, in one line, and exits 2.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from trainwright_lint.commands.options import report_error

LSP_PACKAGES = frozenset({"pygls", "lsprotocol", "cattrs", "attrs"})


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "server",
        help="run the language server (LSP over stdio) for editors",
        description=(
            "Serve diagnostics, quick fixes (the fixes `trainwright fix` applies), `# noqa` actions and "
            "rule pages on hover to an editor over stdin/stdout, with the project's settings as "
            "`trainwright lint` reads them. Needs the server extra: pip install 'trainwright[server]'."
        ),
    )
    parser.add_argument(
        "--stdio", action="store_true", help="talk over stdin/stdout (the default and only way)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        app = importlib.import_module("trainwright_lint.server.app")
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in LSP_PACKAGES:
            raise
        report_error(
            "server",
            f"the language server needs pygls ({missing} is missing): pip install 'trainwright[server]'",
        )
        return 2
    gc.enable()  # the console script turns it off for one-shot runs; a server lives for hours
    app.serve()
    if sys.stdout.closed:  # pygls closes it at exit; the console script flushes it after every command
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until the process exits
    return 0
