"""Run the linter's fuzz target (``tests/reliability/fuzz_lint.py``) for longer than CI does.

    python scripts/fuzz.py --minutes 30            # fresh seed, printed first
    python scripts/fuzz.py --minutes 5 --seed 38   # the same cases again
    python scripts/fuzz.py --replay 123456789      # one project case by the seed a failure printed

Half the time goes to generated programs through lint and fix, half to hostile projects through the
CLI. Exit status 0 when nothing was found, 1 with each failure printed (its seed, input, traceback).
"""

from __future__ import annotations

import argparse
import random
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
for extra in (HERE / "tests" / "reliability", HERE / "plugin", HERE / "src"):
    sys.path.insert(0, str(extra))

import fuzz_lint  # found through the path set above


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="time box (default 5)")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: a fresh one, printed)")
    parser.add_argument("--replay", type=int, default=None, help="re-run one project case by its seed")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=SyntaxWarning)  # generated code such as `"a"()`
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if args.replay is not None:
        broken = fuzz_lint.replay(args.replay)
        print(broken or "no failure")
        return 1 if broken else 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"fuzz seed {seed}, {args.minutes:g} minutes", flush=True)
    failures = fuzz_lint.run(seed, args.minutes * 60, log=lambda line: print(line, flush=True))
    for failure in failures:
        print(f"\n--- {failure.kind} case, seed {failure.seed}\n{failure.what}\n{failure.error}")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
