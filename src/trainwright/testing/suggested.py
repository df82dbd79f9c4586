"""A program with ``trainwright fix --suggest``'s callbacks applied as the suggestions say.

Each suggestion names the lines it moves out of an override (``(lines 13–15)``), prints a callback and
a ``# register it: trainer.add_callback(...)`` line. Applying it is: delete those lines (a ``pass`` keeps
the block valid), append the callback, and run the registration line with ``trainer`` bound
(``Spec.register``). The oracle then trains the original and the applied program and compares them.
Like ``fixed``, this runs the linter's CLI in a subprocess: the library never imports the linter.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from trainwright.testing.compare import Difference

REGISTER = re.compile(r"^# register it: (?P<statement>trainer\.add_callback\(.+?\))  #", re.MULTILINE)
_HEADER = re.compile(r"^# .+?:\d+: TW\d+ .*?\((?P<lines>lines? [\d–, ]+)\)", re.MULTILINE)
# What a suggestion's "Differs from" comment must say for a difference in each field of the record to
# count as named: the steps it runs on (printed lines), where a value is logged (log_history, the
# events ``self.log`` fires, the trainer_state.json that copies the history), when a file is written.
# A difference in any other field (losses, gradients, parameters, controls, errors) is never named.
NAMES = {
    "lines": "once per optimiser step",
    "log_history": "next log line",
    "events": "next log line",
    "trainer_state.json": "next log line",
    "files": "only when a checkpoint is saved",
}


@dataclass(frozen=True)
class Suggested:
    text: str  # everything ``fix --suggest`` printed for the file
    program: Path | None  # the program with the suggestions applied (None: nothing suggested)
    register: tuple[str, ...]  # the statements the suggestions' "register it" lines give

    def unnamed(self, differences: Sequence[Difference]) -> list[Difference]:
        """The ``differences`` (original against this program) the suggestion's text does not name."""
        said = " ".join(line.strip("# ") for line in self.text.splitlines() if line.strip().startswith("#"))
        return [d for d in differences if NAMES.get(_field(d.where), "\0") not in said]


def _field(where: str) -> str:
    """``ga1/train.lines[0]`` -> ``lines``; ``files.ga1/train/progress.txt`` -> ``files``, except a
    checkpoint's ``trainer_state.json`` (it copies ``log_history``)."""
    if where.startswith("files."):
        return "trainer_state.json" if where.endswith("trainer_state.json") else "files"
    return re.split(r"[.\[]", where.split(".", 1)[-1])[0]


def suggestion(source: Path, target: str = "5.24.0") -> str:
    """What ``trainwright fix --suggest`` prints for ``source`` (its standard output)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainwright_lint",
            "fix",
            "--suggest",
            "--transformers-version",
            target,
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return done.stdout


def moved_lines(text: str) -> set[int]:
    """The source lines the suggestions in ``text`` move out (``lines 13–15``, ``lines 12, 14``)."""
    out: set[int] = set()
    for header in _HEADER.finditer(text):
        for part in header["lines"].split(" ", 1)[1].split(","):
            first, _, last = part.strip().partition("–")
            out.update(range(int(first), int(last or first) + 1))
    return out


def without(source: str, lines: set[int]) -> str:
    """``source`` without ``lines`` (1-based); each deleted run becomes one ``pass`` at its indent."""
    out: list[str] = []
    for number, line in enumerate(source.splitlines(), start=1):
        if number not in lines:
            out.append(line)
        elif number - 1 not in lines:
            out.append(line[: len(line) - len(line.lstrip())] + "pass")
    return "\n".join(out) + "\n"


def applied(source: Path, folder: Path, rest: Path | None = None, target: str = "5.24.0") -> Suggested:
    """``source`` with its suggestions applied, written into ``folder``. ``rest``, when given, is the
    program without the moved code written by hand (instead of deleting the lines named)."""
    text = suggestion(source, target)
    register = tuple(m["statement"] for m in REGISTER.finditer(text))
    if not register:
        return Suggested(text, None, ())
    code = "\n".join(line for line in text.splitlines() if not line.startswith("# "))
    kept = rest.read_text() if rest is not None else without(source.read_text(), moved_lines(text))
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / source.name
    program.write_text(kept + "\n\n" + code + "\n")
    return Suggested(text, program, register)
