"""Lint speed, side by side in one run: flake8 without and with the trainwright plugin,
``trainwright lint``, and ``ruff check`` as the speed reference, on the installed transformers + TRL
sources (~3,000 files).

Targets (issue 3): the plugin adds <= 3% to flake8's time; ``trainwright lint`` <= 3x ruff's wall time.

Each tool runs in a fresh process with the same number of jobs; we record wall time and CPU time
(user+sys of the process and its workers). On a shared machine wall time is noisy, so the plugin's
overhead is also measured directly: the checker is run in-process on every file with the ``ast``
tree flake8 would hand it, and that CPU time is divided by flake8's CPU time.

    python benchmarks/lint_speed.py                 # markdown table on stdout
    python benchmarks/lint_speed.py --repeat 3 --jobs 2
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

NO_PLUGIN = "--flake8-without-trainwright"


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # locates without importing the package
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name} is not installed: pip install {name}")
    return Path(next(iter(spec.submodule_search_locations)))


def _timed(cmd: list[str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, cpu, proc.returncode


def _plugin_cpu(paths: list[Path]) -> tuple[float, int, int]:
    """CPU seconds the checker itself spends on every file (given flake8's already-parsed tree)."""
    from trainwright_lint.flake8_plugin import TrainwrightChecker

    total, files, findings = 0.0, 0, 0
    for root in paths:
        for path in sorted(root.rglob("*.py")):
            try:
                lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
                tree = ast.parse("".join(lines))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            files += 1
            start = time.process_time()
            findings += len(list(TrainwrightChecker(tree, lines, str(path)).run()))
            total += time.process_time() - start
    return total, files, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool (median reported)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("paths", nargs="*", type=Path, help="default: installed transformers and trl")
    args = parser.parse_args(argv)
    paths = args.paths or [_package_dir("transformers"), _package_dir("trl")]
    n_files = sum(1 for p in paths for _ in p.rglob("*.py"))
    bindir = Path(sys.executable).parent
    str_paths = [str(p) for p in paths]
    jobs = str(args.jobs)
    flake8 = [sys.executable, "-m", "flake8", "--isolated", "--exit-zero", "-j", jobs]
    tools = {
        "flake8 (no trainwright plugin)": [
            sys.executable,
            __file__,
            NO_PLUGIN,
            "--isolated",
            "--exit-zero",
            "-j",
            jobs,
            *str_paths,
        ],
        "flake8 + trainwright plugin": [*flake8, *str_paths],
        "trainwright lint": [str(bindir / "trainwright"), "lint", "--exit-zero", "-j", jobs, *str_paths],
        "ruff check (no cache)": [
            str(bindir / "ruff"),
            "check",
            "--isolated",
            "--no-cache",
            "--exit-zero",
            "-q",
            *str_paths,
        ],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
    for run in range(args.repeat):
        order = list(tools.items())
        if run % 2:  # interleaved, order reversed every other run, so load drifts hit every tool alike
            order.reverse()
        for name, cmd in order:
            wall, cpu, _ = _timed(cmd)
            results[name].append((wall, cpu))
            print(f"  {name}: {wall:.1f} s wall, {cpu:.1f} s CPU", file=sys.stderr)
    plugin_cpu, plugin_files, plugin_findings = _plugin_cpu(paths)

    med = {
        name: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r))
        for name, r in results.items()
    }
    base_c = med["flake8 (no trainwright plugin)"][1]
    ruff_w, _ = med["ruff check (no cache)"]
    print(
        f"{n_files} files ({', '.join(p.name for p in paths)}), {args.jobs} job(s), median of {args.repeat} run(s)\n"
    )
    print("| tool | wall (s) | CPU (s) | vs flake8 (CPU) | vs ruff (wall) |")
    print("|---|---:|---:|---:|---:|")
    for name, (w, c) in med.items():
        print(f"| {name} | {w:.1f} | {c:.1f} | {c / base_c:.3f}x | {w / ruff_w:.1f}x |")
    print(
        f"\nPlugin overhead measured directly: {plugin_cpu:.2f} CPU-s in the checker over {plugin_files} files "
        f"({plugin_findings} findings) = {100 * plugin_cpu / base_c:.2f}% of flake8's CPU time (target <= 3%)."
    )
    with_c = med["flake8 + trainwright plugin"][1]
    print(
        f"End-to-end flake8 CPU difference: {100 * (with_c - base_c) / base_c:+.2f}% (noisy on a shared machine)."
    )
    print(f"trainwright lint wall / ruff wall: {med['trainwright lint'][0] / ruff_w:.2f}x (target <= 3x).")
    return 0


def _flake8_without_trainwright(argv: list[str]) -> int:
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
        sys.exit(_flake8_without_trainwright(sys.argv[2:]))
    sys.exit(main())
