"""A copy of a user's file with the linter's fixes applied, as a user gets it: by the CLI.

The library never imports the linter (``trainwright_lint``); the oracle's callers get the fixed
program by running ``python -m trainwright_lint fix`` in a subprocess on a copy, in a folder whose
``pyproject.toml`` declares the target range, exactly as a project would.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from trainwright.testing.oracle import Spec

DEFAULT_RANGE = ">=4.44,<6"  # the range a program is fixed for when it declares none (the gallery's)


@dataclass(frozen=True)
class Fixed:
    path: Path  # the fixed copy
    changed: bool  # whether ``fix`` changed it
    output: str  # what ``fix`` printed


def fixed_copy(
    source: Path,
    folder: Path,
    *,
    target: str = DEFAULT_RANGE,
    unsafe: bool = False,
    name: str | None = None,
    select: str | None = None,
) -> Fixed:
    """``source`` copied into ``folder`` (as ``name``) and fixed by ``trainwright fix`` (only the rules
    ``select`` names, e.g. ``"TW302"``, when given: one fix judged apart from the others). ``unsafe``
    applies every move too, those of preview variants included (``--preview``): the oracle judges each
    move the linter can write, whether or not it is on by default."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "oracle-copy"\nversion = "0"\ndependencies = ["transformers{target}"]\n'
    )
    dest = folder / (name or source.name)
    shutil.copyfile(source, dest)
    before = dest.read_bytes()
    command = [
        sys.executable,
        "-m",
        "trainwright_lint",
        "fix",
        *(["--unsafe-fixes", "--preview"] if unsafe else []),
        *(["--select", select] if select else []),
        dest.name,
    ]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False, timeout=300)
    return Fixed(dest, dest.read_bytes() != before, done.stdout + done.stderr)


def judged_spec(
    module: Path,
    *,
    trainer: str | None = None,
    task: str = "causal-lm",
    release: Path | None = None,
    root: Path | None = None,
) -> Spec:
    """How the oracle scripts (``oracle_matrix.py``, ``move_oracle.py``) train an original and its fixed
    copy: the same spec for both, so both scripts give the same verdict on the same program. Every
    callback the module defines that takes no argument is registered (``"*"``); a callback a move
    wrote takes the trainer and is registered by the fixed Trainer's own ``__init__``."""
    return Spec(module, trainer=trainer, callbacks=("*",), task=task, release=release, root=root)
