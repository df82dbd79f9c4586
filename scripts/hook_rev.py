#!/usr/bin/env python3
"""Keep the ``rev:`` of every pre-commit snippet in the docs current: the linter users get.

A pre-commit snippet pins a revision of this repository. If ``plugin/``, the catalogue, the hook
manifest or the package metadata changed after that revision, users copying the snippet get an older
linter than the one documented (issue 22: a snippet 22 commits old ignored the project's pin and
broke the pinned release). Serious hook projects pin a release tag that ``pre-commit autoupdate``
moves; this script checks and writes the rev, and ``tests/lint/test_hook_rev.py`` runs the check.

    python scripts/hook_rev.py            # exit 1 when a snippet's rev is stale, missing or differs
    python scripts/hook_rev.py --write    # point every snippet at the current sources:
                                          # the release tag v<version> when it has them, else the
                                          # last commit that changed them

Release: bump ``version`` in pyproject.toml, commit, ``git tag v<version>``, then ``--write`` (the
snippet then names the tag) and commit the docs.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the hook installs and runs: a change to any of these changes what users of a snippet get.
HOOK_SOURCES = ("plugin", "src/trainwright/catalog", ".pre-commit-hooks.yaml", "pyproject.toml")
SNIPPET_FILES = ("README.md", "docs/index.md", "docs/lint.md")
REPO_URL = "https://github.com/trainwright/trainwright"
# `- repo: <url>` then, on the next line, `rev: <rev>` (and an optional comment).
SNIPPET = re.compile(rf"(- repo: {re.escape(REPO_URL)}\n\s+rev: )(?P<rev>[^\s#]+)(?P<rest>[^\n]*)")
COMMENT = "  # `pre-commit autoupdate` moves it to the newest release"


@dataclass(frozen=True)
class Snippet:
    path: Path
    rev: str


def git(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def snippets(root: Path = ROOT) -> list[Snippet]:
    found = []
    for name in SNIPPET_FILES:
        path = root / name
        if path.is_file():
            found += [Snippet(path, m["rev"]) for m in SNIPPET.finditer(path.read_text(encoding="utf-8"))]
    return found


def version(root: Path = ROOT) -> str:
    """``[project] version`` (read with a pattern: ``tomllib`` needs Python 3.11)."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.MULTILINE | re.DOTALL)
    if found is None:
        raise SystemExit("hook_rev: no [project] version in pyproject.toml")
    return found[1]


def changed_since(rev: str, root: Path = ROOT) -> list[str] | None:
    """The hook's source files that differ between ``rev`` and HEAD; ``None`` when ``rev`` is not a
    commit of this repository, or not one HEAD descends from."""
    commit = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", root=root)
    if (
        commit.returncode != 0
        or git("merge-base", "--is-ancestor", commit.stdout.strip(), "HEAD", root=root).returncode
    ):
        return None
    diff = git("diff", "--name-only", commit.stdout.strip(), "HEAD", "--", *HOOK_SOURCES, root=root)
    return [line for line in diff.stdout.splitlines() if line]


def problems(root: Path = ROOT) -> list[str]:
    """Why the snippets do not give the current linter (empty: they do)."""
    found = snippets(root)
    if not found:
        return [f"no pre-commit snippet for {REPO_URL} in {', '.join(SNIPPET_FILES)}"]
    out = []
    revs = sorted({s.rev for s in found})
    if len(revs) > 1:
        out.append(f"the snippets name different revs: {', '.join(revs)}")
    for rev in revs:
        if rev.startswith("v") and rev != f"v{version(root)}":
            out.append(
                f"rev {rev} is a release tag other than v{version(root)}, the version in pyproject.toml"
            )
        changed = changed_since(rev, root)
        if changed is None:
            out.append(
                f"rev {rev} is not a commit that HEAD descends from (a tag not created, or not fetched?)"
            )
        elif changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            out.append(f"rev {rev} is stale: {shown} changed since")
    return out


def current_rev(root: Path = ROOT) -> str:
    """The release tag ``v<version>`` when it holds the hook's current sources, else the last commit
    that changed them (a later commit that touches none of them gives users the same linter)."""
    tag = f"v{version(root)}"
    if changed_since(tag, root) == []:
        return tag
    last = git("log", "-1", "--format=%H", "--", *HOOK_SOURCES, root=root).stdout.strip()
    if not last:
        raise SystemExit("hook_rev: no commit touches the hook's sources (is this a git checkout?)")
    return last


def write(root: Path = ROOT) -> str:
    rev = current_rev(root)
    for name in SNIPPET_FILES:
        path = root / name
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            path.write_text(SNIPPET.sub(lambda m: f"{m[1]}{rev}{COMMENT}", text), encoding="utf-8")
    return rev


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="point every snippet at the current sources")
    args = parser.parse_args(argv)
    if args.write:
        print(f"hook_rev: the snippets now name {write()}")
        return 0
    found = problems()
    for problem in found:
        print(f"hook_rev: {problem}; run `python scripts/hook_rev.py --write` and commit", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
