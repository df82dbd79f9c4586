#!/usr/bin/env python3
"""Check TW201/TW202 moves with the behaviour oracle: is the moved program the same training?

For each program: copy it, apply ``trainwright fix --unsafe-fixes`` (the move to a callback) as a user
would (``trainwright.testing.fixed.fixed_copy``, ``--select TW201,TW202``: the move alone, for the gallery's range ``>=4.44,<6`` unless
``--target`` says otherwise), train both with the oracle (``trainwright.testing``: GA 1 and 2,
evaluation, checkpoints, resume, ``save_model``, on a virtual clock, on the installed release, and with
``--releases`` on each release named, installed beside it: ``trainwright.testing.releases``) and
compare. The copy, the range and the spec (``judged_spec``) are those of ``scripts/oracle_matrix.py``,
so both print the same verdict for the same program. Prints each program's differences and the count
of oracle-equal moves:

    python scripts/move_oracle.py tests/oracle/moves/*.py
    python scripts/move_oracle.py tests/oracle/moves/*.py --releases 4.47.1 5.24.0
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from trainwright_lint.rules import moving

from trainwright.testing.compare import compare, named_differences
from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy, judged_spec
from trainwright.testing.oracle import run_specs
from trainwright.testing.releases import ensure

MOVES = moving()
PINNED = metadata.version("transformers")  # the venv's release: no folder beside it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="+", type=Path)
    parser.add_argument(
        "--target", default=DEFAULT_RANGE, help="the range the copies declare (default: %(default)s)"
    )
    parser.add_argument(
        "--releases", nargs="+", default=[PINNED], help="the releases to train on (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tw-move-oracle-"))
    pairs = []
    for i, program in enumerate(args.programs):
        if not program.is_file():
            parser.error(f"no such program: {program}")
        # the moves alone: another unsafe fix of the same run (TW302 dropping `num_items_in_batch` for a
        # range from 4.44) changed a fixture whose move was no longer written, and the change was
        # counted as its move
        fixed = fixed_copy(program, work / str(i), target=args.target, unsafe=True, select=MOVES)
        pairs.append((program, fixed))
    equal = moved = 0
    for release in args.releases:
        folder = None if release == PINNED else ensure(release)
        specs = [
            s for p, f in pairs for s in (judged_spec(p, release=folder), judged_spec(f.path, release=folder))
        ]
        records = run_specs(specs)
        for k, (program, fixed) in enumerate(pairs):
            if not fixed.changed:
                print(f"{program}: no move (fix changed nothing)\n  {fixed.output.strip()}")
                continue
            moved += 1
            named = named_differences(fixed.path.read_text(encoding="utf-8"))
            differences = compare(records[2 * k], records[2 * k + 1], named=named)
            equal += not differences
            said = f" (named difference: the moved code {'; '.join(named)})" if named else ""
            verdict = "oracle-equal" if not differences else f"{len(differences)} differences"
            print(f"{program} on {release}: {verdict}{said}")
            for d in differences[:8]:
                print(f"  {d}")
    print(f"{equal} of {moved} moves oracle-equal ({len(pairs)} programs, {len(args.releases)} releases)")
    return 0 if equal == moved else 1


if __name__ == "__main__":
    sys.exit(main())
