"""A program with a ``trainwright fix --suggest`` preview applied exactly as it was printed.

``--suggest`` prints, per TW2xx finding, the unified diff of that finding's move fix applied alone to
the file (the callback class, the statements removed from the override, the ``add_callback`` line in
``__init__``), or one line ``no mechanical move: <reason>``. Applying a preview is applying its diff,
hunk by hunk, to the original file: the oracle then trains the original and the applied program and
compares them. Like ``fixed``, this runs the linter's CLI in a subprocess: the library never imports
the linter.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# A finding's header, as ``lint --output-format concise`` prints it: ``path:line:col: TW201 ...``.
HEADER = re.compile(r"^\S.*?:\d+:\d+: TW2\d\d ", re.MULTILINE)
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,(?P<count>\d+))? \+\d+(?:,\d+)? @@")
NO_MOVE = "  no mechanical move: "


class PreviewError(ValueError):
    """A printed diff that does not apply to the file it names (its context lines differ)."""


@dataclass(frozen=True)
class Suggested:
    text: str  # what ``fix --suggest`` printed for this finding (header, help line, diff)
    program: Path | None  # the program with the diff applied (None: no mechanical move)

    @property
    def withheld(self) -> str | None:
        """The reason printed when there is no mechanical move, else None."""
        for line in self.text.splitlines():
            if line.startswith(NO_MOVE):
                return line[len(NO_MOVE) :]
        return None


def suggestion(source: Path, target: str = "5.24.0", preview: bool = False) -> str:
    """What ``trainwright fix --suggest`` prints for ``source`` (its standard output); ``preview`` adds
    the findings without a move (``--preview``), each with the reason it has none."""
    done = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "fix", "--suggest", "--transformers-version", target,
         *(["--preview"] if preview else []), str(source)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    return done.stdout


def blocks(text: str) -> list[str]:
    """The printed previews, one per finding (a header line and what follows it)."""
    starts = [m.start() for m in HEADER.finditer(text)]
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]


def apply_diff(source: str, diff: str) -> str:
    """``source`` with the unified diff ``diff`` applied; raises ``PreviewError`` when a context or
    removed line is not what ``source`` holds there."""
    old = source.splitlines(keepends=True)
    out: list[str] = []
    at = 0  # lines of ``old`` consumed
    for line in diff.splitlines(keepends=True):
        hunk = _HUNK.match(line)
        if hunk is not None:
            start = int(hunk["start"]) - (0 if hunk["count"] == "0" else 1)
            out += old[at:start]
            at = start
        elif line.startswith(("---", "+++", "\\")) or not line.strip("\n") and not line.startswith(" "):
            continue
        elif line.startswith("+"):
            out.append(line[1:])
        elif line[:1] in (" ", "-"):
            if at >= len(old) or old[at].rstrip("\r\n") != line[1:].rstrip("\r\n"):
                raise PreviewError(f"line {at + 1} is not {line[1:].strip()!r}")
            if line.startswith(" "):
                out.append(old[at])
            at += 1
    return "".join(out + old[at:])


def applied(source: Path, folder: Path, target: str = "5.24.0", preview: bool = True) -> list[Suggested]:
    """Each preview ``fix --suggest`` prints for ``source``, applied alone to it (``folder/<i>/``);
    ``preview``: with ``--preview``, so the moves of preview variants (``Rule.preview_variants``) are
    judged too, and the findings with no move are listed."""
    out = []
    for i, text in enumerate(blocks(suggestion(source, target, preview))):
        if NO_MOVE in text:
            out.append(Suggested(text, None))
            continue
        program = folder / str(i) / source.name
        program.parent.mkdir(parents=True, exist_ok=True)
        program.write_text(apply_diff(source.read_text(), text.split("\n", 2)[2]))
        out.append(Suggested(text, program))
    return out
