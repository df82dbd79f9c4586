"""Where one ``trainwright lint -j 1`` run on TRL's source spends its CPU, phase by phase.

``lint_speed.py`` gives the ratios; this gives the parts, so that a claim such as "the floor is
start-up + parse + summaries" is a measurement anyone can repeat. Each round is a fresh process that
runs the CLI in-process (``--file-timeout 0``: no time-limit child, whose cost ``lint_speed.py`` shows
as the difference to a default run) with the garbage collector off and glibc keeping freed heap, as
``cli.console`` starts it. Timers wrap the runner's own calls (no rule is touched):

* start-up: the interpreter and ``site`` before this script runs;
* imports: the modules a ``lint`` run loads (``cli.build_parser(["lint"])``, the runner, the engine);
* reading: ``read_source`` (every file, and again for each file parsed);
* parse: ``parse_source`` (``ast.parse``, trees kept for the lint);
* summaries: ``summarise``;
* rules: ``lint_unit`` per file, split per rule by the engine's own ``rule_seconds`` (a fact shared by
  several rules counts for the first that needed it);
* the rest: configuration, target and catalogue, discovery, the project model, output.

Process CPU is user + system time; system time is mostly page faults for the kept trees, and is shown
on its own too. The median of ``--repeat`` rounds is reported, with ``ast.parse`` of the gated files
(``lint_speed.py``'s baseline, a process of its own) in the same rounds.

    python benchmarks/lint_phases.py --repeat 5
    python benchmarks/lint_phases.py --select TW403   # the floor: one cheap rule
"""

from __future__ import annotations

import resource
import time

_STARTED = resource.getrusage(resource.RUSAGE_SELF)  # before anything of this script's is imported

import argparse  # the imports after the start-up reading above, on purpose
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = "--child"
PHASES = ("start-up", "imports", "reading", "parse", "summaries", "rules", "the rest")


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def child(path: str, select: str | None) -> dict[str, object]:
    """One in-process lint of ``path``: CPU per phase (seconds), per rule, system time, page faults."""
    import gc

    gc.disable()  # as ``cli.console``
    begun = time.process_time()
    from trainwright_lint import cli, runner

    cli.build_parser(["lint"])  # imports what a ``lint`` run imports
    imports = time.process_time() - begun
    spent = dict.fromkeys(("reading", "parse", "summaries", "rules"), 0.0)

    def timed(name: str, phase: str) -> None:
        original = getattr(runner, name)

        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            start = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent[phase] += time.process_time() - start

        setattr(runner, name, wrapper)

    for name, phase in (
        ("read_source", "reading"),
        ("parse_source", "parse"),
        ("summarise", "summaries"),
        ("lint_unit", "rules"),
    ):
        timed(name, phase)
    results: list[runner.LintResult] = []
    lint_files = runner.lint_files

    def keeping(*args, **kwargs):  # type: ignore[no-untyped-def]
        results.append(lint_files(*args, **kwargs))
        return results[-1]

    from trainwright_lint.commands import lint as lint_command

    lint_command.lint_files = keeping  # the command's own name for it
    cli.keep_freed_heap()
    argv = [
        "lint",
        "-j",
        "1",
        "--exit-zero",
        "--file-timeout",
        "0",
        *(["--select", select] if select else []),
        path,
    ]
    started = time.process_time()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            cli.main(argv)
        finally:
            sys.stdout = stdout
    run = time.process_time() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    phases = {"start-up": _cpu(_STARTED), "imports": imports, **spent}
    phases["the rest"] = run - sum(spent.values())
    return {
        "phases": phases,
        "per_rule": dict(results[-1].rule_seconds) if results else {},
        "total": _cpu(usage),
        "system": usage.ru_stime,
        "faults": usage.ru_minflt,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (median reported)")
    parser.add_argument("--select", help="only these rules (e.g. TW403 for the floor)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    import lint_speed  # the same corpus copy and parse baseline

    with tempfile.TemporaryDirectory(prefix="tw-lint-phases-") as tmp:
        work = Path(tmp)
        shutil.copytree(
            lint_speed.package_dir("trl"), work / "trl", ignore=shutil.ignore_patterns("__pycache__")
        )
        (work / "pyproject.toml").write_text('[project]\nname = "corpus"\nversion = "0"\n', encoding="utf-8")
        listing = work / "gated.txt"
        listing.write_text("\n".join(str(p) for p in lint_speed.gated_files(work / "trl")), encoding="utf-8")
        me = [sys.executable, __file__, CHILD, *(["--select", args.select] if args.select else []), "trl"]
        runs, parses = [], []
        for _ in range(args.repeat + 1):  # the first round is a warm-up (bytecode and file caches)
            out = subprocess.run(me, cwd=work, capture_output=True, text=True, check=True).stdout
            runs.append(json.loads(out))
            parse = [sys.executable, lint_speed.__file__, lint_speed.PARSE_ONLY, str(listing)]
            parses.append(
                float(subprocess.run(parse, cwd=work, capture_output=True, text=True, check=True).stdout)
            )
        runs, parses = runs[1:], parses[1:]

    def median(values: list[float]) -> float:
        return statistics.median(values)

    parse = median(parses)
    total = median([r["total"] for r in runs])
    print(
        f"median of {args.repeat} fresh runs, `trainwright lint -j 1 --file-timeout 0` on TRL"
        f"{' --select ' + args.select if args.select else ''}; `ast.parse` of the gated files {parse:.3f} s\n"
    )
    print("| phase | CPU s | ÷ parse |")
    print("|---|---:|---:|")
    for phase in PHASES:
        value = median([r["phases"][phase] for r in runs])
        print(f"| {phase} | {value:.3f} | {value / parse:.2f} |")
    print(f"| **whole process** | **{total:.3f}** | **{total / parse:.2f}** |")
    system = median([r["system"] for r in runs])
    faults = median([r["faults"] for r in runs])
    print(f"\nsystem time {system:.3f} s, {faults:.0f} page faults (both inside the phases above)")
    codes = sorted(
        {c for r in runs for c in r["per_rule"]},
        key=lambda c: -median([r["per_rule"].get(c, 0.0) for r in runs]),
    )
    shown = ", ".join(f"{c} {median([r['per_rule'].get(c, 0.0) for r in runs]):.3f}" for c in codes)
    print(f"\nrules: {shown}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD:
        rest = sys.argv[2:]
        select = rest[rest.index("--select") + 1] if "--select" in rest else None
        print(json.dumps(child(rest[-1], select)))
        sys.exit(0)
    sys.exit(main())
