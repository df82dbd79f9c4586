"""A program with ``trainwright fix --suggest``'s callback pasted in and registered as it says."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_REGISTER = re.compile(r"^# register it: (?P<statement>trainer\.add_callback\(.+?\))  #", re.MULTILINE)


@dataclass(frozen=True)
class Suggested:
    text: str  # everything ``fix --suggest`` printed for the file
    program: Path | None  # the override-free rest of the program with the callback appended
    register: str  # the statement the suggestion's "register it" line gives


def suggestion(source: Path) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainwright_lint",
            "fix",
            "--suggest",
            "--transformers-version",
            "5.24.0",
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def pasted(source: Path, rest: Path, folder: Path) -> Suggested:
    """``rest`` (the program without the moved code) with the suggested callback appended."""
    text = suggestion(source)
    found = _REGISTER.search(text)
    if found is None:
        return Suggested(text, None, "")
    code = "\n".join(line for line in text.splitlines() if not line.startswith("# "))
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / rest.name
    program.write_text(rest.read_text() + "\n\n" + code + "\n")
    return Suggested(text, program, found["statement"])
