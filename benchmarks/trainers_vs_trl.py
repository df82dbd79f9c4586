#!/usr/bin/env python
"""Side-by-side benchmark: trainwright's trainers against TRL's, same model, data and settings.

    python benchmarks/trainers_vs_trl.py dpo  [--sizes tiny,small] [--repeats 3] [--steps 20]
    python benchmarks/trainers_vs_trl.py grpo [--sizes tiny,small] [--repeats 3] [--steps 8]
    python benchmarks/trainers_vs_trl.py grpo_tools [--sizes tiny,small] [--repeats 3] [--steps 8]  # tool calling
    python benchmarks/trainers_vs_trl.py {dpo,grpo} --profile [--profile-clock cpu] [--sizes small]

``--profile`` instruments both trainers with the same timing hooks (``benchmarks/_profile.py``, whose
docstring explains the method and its accuracy) and prints, per model size, where an optimiser step's
time goes for ours and TRL side by side; the shares add up to 100 %. The timing table is printed too,
but hooks cost ~1 µs each, so use the unprofiled run for the sec/step numbers.

Every measurement runs in a fresh subprocess (``benchmarks/_worker.py``), so peak RSS
(``ru_maxrss``) belongs to one run only, and runs alternate ours / TRL / ours / TRL ... so that
slow drift of the machine (thermal, other load) hits both sides equally. The report is the median
over repeats and the ratio ours / TRL (below 1.0 = ours is faster or smaller).

The algorithm-specific set-up lives in ``bench_dpo.py`` and ``bench_grpo.py``; each exposes
``run(impl: str, size: str, steps: int, workdir: str) -> dict`` returning at least
``sec_per_step`` (median seconds per optimiser step, warm-up steps excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
IMPLS = ("ours", "trl")


def measure(algo: str, impl: str, size: str, steps: int, extra: list[str]) -> dict:
    cmd = [sys.executable, str(HERE / "_worker.py"), algo, impl, size, str(steps), *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1", "WANDB_DISABLED": "true"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(cmd)}\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("algo", choices=["dpo", "grpo", "grpo_tools"])
    parser.add_argument("--sizes", default="tiny,small", help="comma-separated model sizes (tiny, small)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per implementation and size")
    parser.add_argument("--steps", type=int, default=None, help="optimiser steps per run")
    parser.add_argument("--json", type=Path, default=None, help="also write the medians and every run here")
    parser.add_argument("--profile", action="store_true", help="print where each step's time goes")
    parser.add_argument(
        "--profile-clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall time, or the training thread's CPU time",
    )
    args, extra = parser.parse_known_args(argv)
    steps = args.steps or (20 if args.algo == "dpo" else 8)
    if args.profile:
        extra = [*extra, "--profile" if args.profile_clock == "wall" else "--profile=cpu"]

    rows = []
    for size in args.sizes.split(","):
        results: dict[str, list[dict]] = {impl: [] for impl in IMPLS}
        for _ in range(args.repeats):
            for impl in IMPLS:  # alternate within each repeat
                results[impl].append(measure(args.algo, impl, size, steps, extra))
        summary = {"size": size}
        for impl in IMPLS:
            for key in results[impl][0]:
                if isinstance(results[impl][0][key], (int, float)):
                    summary[f"{impl}_{key}"] = statistics.median(r[key] for r in results[impl])
        rows.append((summary, results))

    keys = ["sec_per_step", "peak_rss_mb"]
    print(f"\n{args.algo.upper()}: median of {args.repeats} alternating runs, {steps} steps each")
    print("| model | metric | trainwright | TRL | ratio (ours/TRL) |\n|---|---|---|---|---|")
    for summary, _ in rows:
        for key in keys + sorted(k[5:] for k in summary if k.startswith("ours_") and k[5:] not in keys):
            ours, theirs = summary.get(f"ours_{key}"), summary.get(f"trl_{key}")
            if ours is None or theirs is None:
                continue
            ratio = ours / theirs if theirs else float("nan")
            print(f"| {summary['size']} | {key} | {ours:.4g} | {theirs:.4g} | {ratio:.2f} |")
    if args.profile:
        from _profile import format_profile

        for summary, results in rows:
            profiles = {impl: [r["profile"] for r in results[impl]] for impl in IMPLS}
            print(f"\nmodel: {summary['size']}")
            print(format_profile(args.algo, profiles, args.profile_clock, args.repeats))
    if args.json:
        payload = [{**r, "runs": results} for r, results in rows]  # medians, then every run
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
