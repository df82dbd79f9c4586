"""``trainwright catalog add VERSION`` and ``trainwright catalog list``: cover a release newer than the
shipped catalogue, and show what is covered and where each release's facts came from.

Why ``add``: a pre-commit environment has no transformers installed, so the installed-release route of
:mod:`trainwright.catalog.usercache` never fires there; ``add`` fetches the release's wheel with
``pip download --no-deps`` (or takes ``--wheel PATH``), extracts its facts with the catalogue builder's own
extractor (source read with ``ast``, never imported) and caches them in the user cache folder, where every
later run finds them. Exit status: 0 added or listed, 2 the release cannot be fetched or read.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from trainwright.catalog import load_catalog
from trainwright.catalog.usercache import LIBRARIES, ExtractionError, add_wheel, cache_root
from trainwright.catalog.versions import version_key
from trainwright_lint.terminal import printable


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "catalog",
        help="cover a transformers/TRL release newer than the catalogue; list what is covered",
        description="Releases newer than the shipped catalogue are covered from the installed source "
        "automatically; `catalog add VERSION` covers one that is not installed (pre-commit), from its wheel.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="fetch a release's wheel (pip download --no-deps) and cover it")
    add.add_argument("version", metavar="VERSION", help="the release, e.g. 5.25.0")
    add.add_argument("--library", choices=LIBRARIES, default="transformers")
    add.add_argument("--wheel", type=Path, metavar="PATH", help="use this wheel instead of downloading it")
    add.set_defaults(func=run_add)
    listing = actions.add_parser("list", help="the covered releases and where their facts came from")
    listing.add_argument("--library", choices=LIBRARIES, default=None, help="one library (default: both)")
    listing.set_defaults(func=run_list)


def _say(text: str, stream: TextIO = sys.stderr) -> None:
    print(printable(text, stream), file=stream)


def run_add(args: argparse.Namespace) -> int:
    library, version = args.library, args.version.strip()
    try:
        version_key(version)
    except ValueError as exc:
        _say(f"trainwright catalog add: error: {exc}")
        return 2
    shipped = load_catalog(library).shipped_newest
    if version_key(version) <= version_key(shipped):
        _say(
            f"trainwright catalog add: error: {library} {version} is not newer than the shipped catalogue "
            f"(newest {shipped}): a release inside it is checked as the nearest covered one at or below it"
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="trainwright-wheel-") as scratch:
        wheel = args.wheel or _download(library, version, Path(scratch))
        if wheel is None:
            return 2
        try:
            added = add_wheel(library, wheel)
        except ExtractionError as exc:  # its message names the wheel or the library
            _say(f"trainwright catalog add: error: {exc}")
            return 2
        except OSError as exc:
            _say(f"trainwright catalog add: error: cannot read {wheel}: {exc.strerror or exc}")
            return 2
    if added.version != version:
        _say(f"trainwright catalog add: error: {wheel.name} is {library} {added.version}, not {version}")
        return 2
    _say(f"covered {library} {added.provenance} (cached in {cache_root() / 'catalog' / library})")
    return 0


def _download(library: str, version: str, into: Path) -> Path | None:
    """``pip download --no-deps LIBRARY==VERSION`` into ``into``; the wheel, or ``None`` after saying why."""
    command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:"]
    command += [f"{library}=={version}", "-d", str(into)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _say(f"trainwright catalog add: error: could not run pip download: {exc}")
        return None
    wheels = sorted(into.glob(f"{library}-*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"]
        _say(
            f"trainwright catalog add: error: `pip download --no-deps {library}=={version}` failed ({last[0]}); "
            f"download the wheel elsewhere and pass it with --wheel PATH"
        )
        return None
    return wheels[0]


def run_list(args: argparse.Namespace) -> int:
    for library in [args.library] if args.library else LIBRARIES:
        catalog = load_catalog(library)
        shipped = catalog.versions[: catalog.versions.index(catalog.shipped_newest) + 1]
        _say(f"{library}: {len(shipped)} releases shipped, {shipped[0]}–{shipped[-1]}", sys.stdout)
        for line in catalog.provenance():
            _say(f"{library}: {line}", sys.stdout)
        for problem in catalog.problems:
            _say(f"{library}: warning: {problem}", sys.stdout)
    return 0
