"""Lint speed as ratios measured side by side in one run (issue 10's three measures, issue 21's fourth).

1. ``trainwright lint -j 1`` CPU on TRL's source ÷ the CPU of ``ast.parse`` on the files the linter's gate
   lets through (goal <= 1.6): what the linter costs beyond reading the code it must read.
2. flake8 with the trainwright plugin ÷ the same flake8 without it, CPU, on TRL's source (goal <= 1.05).
3. ``trainwright lint`` ÷ ``ruff check`` (default rules, no cache) wall time, on transformers + TRL
   (goal <= 1.5), both with their default parallelism: a large mixed tree, where most files hold no
   Trainer code. ``lint_vs_ruff_trl`` is the same on TRL alone (no goal): trainer-dense code, as a
   user's training repository is, where the linter has work in most files.
4. ``trainwright lint -j 1`` CPU on TRL's source with ``--transformers-version '>=4.46,<5.25'`` (64
   releases) ÷ the same at ``5.24.0`` (goal <= 1.2): what a declared range costs over one release.

The sources are copied into a temporary folder first: the installed packages live in a virtual
environment that the project's ``.gitignore`` excludes, and a copy outside any repository is linted as
its own project, as a user's checkout would be. Every measurement runs in a fresh process; the runs of
each measure are interleaved (the order reversed every other round) so that load drifts on a shared
machine hit both sides alike, and the median of ``--repeat`` rounds is reported. CPU is user + system
time of the process and its children (``RUSAGE_CHILDREN``).

    python benchmarks/lint_speed.py                 # Markdown table on stdout, progress on stderr
    python benchmarks/lint_speed.py --repeat 5
    python benchmarks/lint_speed.py --measures lint_vs_parse --baseline ../old-checkout

``--baseline DIR`` adds a third side to the first measure: the linter of another checkout (``git worktree
add DIR REV``), run with this interpreter and ``PYTHONPATH=DIR/plugin:DIR/src``, in the same rounds. The
ratio moves with the machine (the same revision gave 1.86 on the machine that set the goal and 2.11 on
this one), so a change is judged against its predecessor measured beside it, not against an old number.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

NO_PLUGIN = "--flake8-without-trainwright"
PARSE_ONLY = "--parse-only"
GOALS: dict[str, float | None] = {
    "lint_vs_parse": 1.6,
    "flake8_plugin": 1.05,
    "lint_vs_ruff": 1.5,
    "lint_vs_ruff_trl": None,  # no goal: the honest figure for trainer-dense code, shown beside the other
    "range_vs_release": 1.2,
}
RANGE, RELEASE = ">=4.46,<5.25", "5.24.0"


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # locates without importing the package
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} is not installed: pip install {name}")
    return Path(next(iter(spec.submodule_search_locations)))


def timed(cmd: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process tree, stdout) of one run of ``cmd``."""
    env = {
        k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"
    }  # compiled once, as installed
    env.update(extra_env or {})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout


def gated_files(root: Path) -> list[Path]:
    """The files ``trainwright lint`` parses: those its text gate lets through."""
    from trainwright_lint import prefilter

    out = []
    for path in sorted(root.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if prefilter.worth_linting(text):
            out.append(path)
    return out


def parse_only(paths: list[str]) -> float:
    """CPU seconds of ``ast.parse`` alone over ``paths`` (reading them is not counted)."""
    sources = [Path(p).read_text(encoding="utf-8") for p in paths]
    start = time.process_time()
    for source in sources:
        ast.parse(source)
    return time.process_time() - start


def rounds(repeat: int, sides: dict[str, Callable[[], float]]) -> dict[str, float]:
    """The median of each side over ``repeat`` interleaved rounds, after one unmeasured warm-up run of
    each (it writes the bytecode caches and fills the file cache). ``repeat`` 0: not measured (nan)."""
    if repeat <= 0:
        return {name: float("nan") for name in sides}
    for measure in sides.values():
        measure()
    values: dict[str, list[float]] = {name: [] for name in sides}
    for run in range(repeat):
        order = list(sides.items())
        if run % 2:
            order.reverse()
        for name, measure in order:
            values[name].append(measure())
            print(f"  {name}: {values[name][-1]:.3f}", file=sys.stderr)
    return {name: statistics.median(v) for name, v in values.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds per measure (median reported)")
    parser.add_argument(
        "--measures", nargs="+", choices=sorted(GOALS), default=sorted(GOALS), help="which ratios to measure"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout whose linter the first measure times in the same rounds",
    )
    args = parser.parse_args(argv)
    wanted = set(args.measures)
    bindir = Path(sys.executable).parent
    trainwright, ruff = str(bindir / "trainwright"), str(bindir / "ruff")
    with tempfile.TemporaryDirectory(prefix="tw-lint-speed-") as tmp:
        work = Path(tmp)
        for name in ("transformers", "trl"):
            shutil.copytree(package_dir(name), work / name, ignore=shutil.ignore_patterns("__pycache__"))
        # A project root, as a checkout has: flake8's plugin and the CLI then see one project.
        (work / "pyproject.toml").write_text('[project]\nname = "corpus"\nversion = "0"\n', encoding="utf-8")
        gated = [str(p) for p in gated_files(work / "trl")]
        listing = work / "gated.txt"
        listing.write_text("\n".join(gated), encoding="utf-8")
        load = os.getloadavg()[0]

        def parse_cpu() -> float:
            return float(timed([sys.executable, __file__, PARSE_ONLY, str(listing)], work)[2])

        def lint_cpu() -> float:
            return timed([trainwright, "lint", "-j", "1", "--exit-zero", "trl"], work)[1]

        sides = {"ast.parse (gated TRL files)": parse_cpu, "trainwright lint -j 1": lint_cpu}
        if args.baseline is not None:
            sides[BASELINE] = baseline_lint(args.baseline.resolve(), work)
        first = rounds(args.repeat if "lint_vs_parse" in wanted else 0, sides)

        flake8 = ["--isolated", "--exit-zero", "-j", "1", "trl"]

        def flake8_cpu() -> float:
            return timed([sys.executable, "-m", "flake8", *flake8], work)[1]

        def flake8_bare_cpu() -> float:
            return timed([sys.executable, __file__, NO_PLUGIN, *flake8], work)[1]

        second = rounds(
            args.repeat if "flake8_plugin" in wanted else 0,
            {"flake8 without plugin": flake8_bare_cpu, "flake8 + plugin": flake8_cpu},
        )

        def lint_wall() -> float:
            return timed([trainwright, "lint", "--exit-zero", "transformers", "trl"], work)[0]

        def ruff_wall() -> float:
            return timed(
                [ruff, "check", "--isolated", "--no-cache", "--exit-zero", "-q", "transformers", "trl"], work
            )[0]

        third = rounds(
            args.repeat if "lint_vs_ruff" in wanted else 0,
            {"ruff check": ruff_wall, "trainwright lint": lint_wall},
        )

        def lint_at(version: str) -> Callable[[], float]:
            cmd = [trainwright, "lint", "-j", "1", "--exit-zero", "--transformers-version", version, "trl"]
            return lambda: timed(cmd, work)[1]

        def lint_trl_wall() -> float:
            return timed([trainwright, "lint", "--exit-zero", "trl"], work)[0]

        def ruff_trl_wall() -> float:
            return timed([ruff, "check", "--isolated", "--no-cache", "--exit-zero", "-q", "trl"], work)[0]

        dense = rounds(
            args.repeat if "lint_vs_ruff_trl" in wanted else 0,
            {"ruff check TRL": ruff_trl_wall, "trainwright lint TRL": lint_trl_wall},
        )

        fourth = rounds(
            args.repeat if "range_vs_release" in wanted else 0,
            {f"lint at {RELEASE}": lint_at(RELEASE), f"lint at {RANGE}": lint_at(RANGE)},
        )
        n_trl = sum(1 for _ in (work / "trl").rglob("*.py"))
        n_all = n_trl + sum(1 for _ in (work / "transformers").rglob("*.py"))
    ratios = {
        "lint_vs_parse": first["trainwright lint -j 1"] / first["ast.parse (gated TRL files)"],
        "flake8_plugin": second["flake8 + plugin"] / second["flake8 without plugin"],
        "lint_vs_ruff": third["trainwright lint"] / third["ruff check"],
        "lint_vs_ruff_trl": dense["trainwright lint TRL"] / dense["ruff check TRL"],
        "range_vs_release": fourth[f"lint at {RANGE}"] / fourth[f"lint at {RELEASE}"],
    }
    rows = [
        (
            "lint_vs_parse",
            f"`trainwright lint -j 1` CPU ÷ `ast.parse` CPU, TRL ({len(gated)} of {n_trl} files gated)",
            f"{first['trainwright lint -j 1']:.2f} s ÷ {first['ast.parse (gated TRL files)']:.2f} s",
        ),
        (
            "flake8_plugin",
            f"flake8 + plugin ÷ flake8 without it, CPU, TRL ({n_trl} files, `-j 1`)",
            f"{second['flake8 + plugin']:.2f} s ÷ {second['flake8 without plugin']:.2f} s",
        ),
        (
            "lint_vs_ruff",
            f"`trainwright lint` ÷ `ruff check`, wall, transformers + TRL ({n_all} files)",
            f"{third['trainwright lint']:.2f} s ÷ {third['ruff check']:.2f} s",
        ),
        (
            "lint_vs_ruff_trl",
            f"`trainwright lint` ÷ `ruff check`, wall, TRL alone ({n_trl} files, trainer-dense)",
            f"{dense['trainwright lint TRL']:.2f} s ÷ {dense['ruff check TRL']:.2f} s",
        ),
        (
            "range_vs_release",
            f"`trainwright lint -j 1` CPU at `{RANGE}` ÷ at `{RELEASE}`, TRL",
            f"{fourth[f'lint at {RANGE}']:.2f} s ÷ {fourth[f'lint at {RELEASE}']:.2f} s",
        ),
    ]
    print(
        f"median of {args.repeat} interleaved rounds; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end; {os.cpu_count()} CPUs\n"
    )
    print("| measure | goal | result | ratio |")
    print("|---|---:|---|---:|")
    for key, label, detail in rows:
        if key not in wanted:
            continue
        goal = GOALS[key]
        print(f"| {label} | {'-' if goal is None else f'≤ {goal:g}'} | {detail} | {ratios[key]:.2f} |")
    if BASELINE in first and "lint_vs_parse" in wanted:
        base, parse = first[BASELINE], first["ast.parse (gated TRL files)"]
        print(
            f"\nbaseline `{args.baseline}`, same rounds: {base:.2f} s ÷ {parse:.2f} s = {base / parse:.2f}; "
            f"this checkout ÷ baseline: {first['trainwright lint -j 1'] / base:.3f}"
        )
    return 0


BASELINE = "baseline lint -j 1"


def baseline_lint(tree: Path, work: Path) -> Callable[[], float]:
    """CPU of ``trainwright lint -j 1`` from the checkout ``tree``: its sources ahead of the installed
    ones on the path, started as the console script starts (``cli.console``)."""
    if not (tree / "plugin" / "trainwright_lint").is_dir():
        raise SystemExit(f"--baseline {tree}: no plugin/trainwright_lint there (a trainwright checkout?)")
    path = os.pathsep.join([str(tree / "plugin"), str(tree / "src"), os.environ.get("PYTHONPATH", "")])
    start = "import sys; sys.argv[0] = 'trainwright'; from trainwright_lint.cli import console; console()"
    cmd = [sys.executable, "-c", start, "lint", "-j", "1", "--exit-zero", "trl"]
    return lambda: timed(cmd, work, {"PYTHONPATH": path.rstrip(os.pathsep)})[1]


def flake8_without_trainwright(argv: list[str]) -> int:
    """Run flake8 with the trainwright entry point filtered out of plugin discovery."""
    from flake8.main import cli
    from flake8.plugins import finder

    original = finder._find_importlib_plugins

    def without():  # type: ignore[no-untyped-def]
        return (p for p in original() if p.package != "trainwright")

    finder._find_importlib_plugins = without
    return cli.main(argv)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == NO_PLUGIN:
        sys.exit(flake8_without_trainwright(sys.argv[2:]))
    if len(sys.argv) > 2 and sys.argv[1] == PARSE_ONLY:
        print(parse_only(Path(sys.argv[2]).read_text(encoding="utf-8").split("\n")))
        sys.exit(0)
    sys.exit(main())
