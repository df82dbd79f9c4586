"""What covering a release newer than the catalogue costs a lint run (issue 34), in three situations:

1. **nothing newer** (the installed transformers is catalogued): ``trainwright lint`` on a one-file
   project, this checkout beside ``--baseline DIR`` (a checkout without the feature), in the same rounds;
2. **first run**: a catalogue one release behind (``tests/catalog/lagging.py``) with that release
   installed (``--site DIR``, from ``pip install --no-deps --target``), and an empty cache: the run
   extracts the release's facts from its source and caches them;
3. **later runs**: the same, with the cache filled.

Every run is a fresh process; CPU is user + system time of the child (``RUSAGE_CHILDREN``), wall is
``time.perf_counter``. The sides of each round are interleaved so that load drifts on a shared machine hit
both alike; the medians of ``--repeat`` rounds are printed as a Markdown table. The extraction alone
(in-process, ``Package.from_dir`` + ``usercache.extract``) is timed too.

    pip install --no-deps --target /tmp/tf525 transformers==5.25.0
    git archive 1281dd5 | tar -x -C /tmp/base
    python benchmarks/catalog_newer_release.py --site /tmp/tf525 --baseline /tmp/base --repeat 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "catalog")]

from lagging import lagging_package

PROJECT = """\
from transformers import Trainer


class ResumingTrainer(Trainer):
    def get_resumed_dataloader(self, dataloader, num_batches):
        return super().get_resumed_dataloader(dataloader, num_batches)
"""


def _project(root: Path, requirement: str) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "d"\nversion = "0"\ndependencies = ["transformers{requirement}"]\n'
    )
    (root / "train.py").write_text(PROJECT)
    return root


def run(pythonpath: list[Path], cwd: Path, cache: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``trainwright lint -j 1`` in a fresh process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, pythonpath)), XDG_CACHE_HOME=str(cache))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", "."],
        cwd=cwd,
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def extraction(site: Path) -> tuple[float, float]:
    """(wall, CPU) of reading and extracting the installed release in this process."""
    from trainwright.catalog import usercache
    from trainwright.catalog.extract import facts

    facts.parse_source.cache_clear()
    start, cpu = time.perf_counter(), time.process_time()
    usercache.extract("transformers", facts.Package.from_dir(site / "transformers"))
    return time.perf_counter() - start, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="a --target folder holding the new release")
    parser.add_argument("--baseline", type=Path, help="a checkout without the feature, for situation 1")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="tw-bench-"))
    try:
        # The same releases on both sides of situation 1 (the baseline's catalogue ends at 5.24.0).
        same = _project(scratch / "same", ">=4.46,<5.25")
        project = _project(scratch / "project", ">=4.46")
        lagging = lagging_package(scratch / "lagging")
        plugin = ROOT / "plugin"
        rows: dict[str, list[tuple[float, float]]] = {}
        for round_ in range(args.repeat):
            sides = [("nothing newer, this checkout", [ROOT / "src", plugin], scratch / "c0", same)]
            if args.baseline:
                base = [args.baseline / "src", args.baseline / "plugin"]
                sides.append(("nothing newer, baseline", base, scratch / "c0", same))
            if round_ % 2:
                sides.reverse()
            cold = scratch / f"cold{round_}"
            sides.append(("first run: extracts 5.25.0", [args.site, lagging, plugin], cold, project))
            sides.append(("later run: reads the cache", [args.site, lagging, plugin], cold, project))
            for name, path, cache, where in sides:
                rows.setdefault(name, []).append(run(path, where, cache))
                print(f"round {round_ + 1}: {name}: {rows[name][-1]}", file=sys.stderr)
            rows.setdefault("extraction alone (in-process)", []).append(extraction(args.site))
        print("| situation | wall s (median) | CPU s (median) | CPU s, each round |")
        print("|---|---|---|---|")
        for name, samples in rows.items():
            walls, cpus = zip(*samples)
            each = ", ".join(f"{c:.2f}" for c in cpus)
            print(f"| {name} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} | {each} |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
