#!/usr/bin/env python
"""A one-minute tour of trainwright: the linter on a gallery of real-world overrides, a safe fix, the
preview of a callback move, then the two reference trainers on toy tasks.

    python examples/tour.py            # the README's first command runs this after installing
    python examples/tour.py --quick    # fewer training steps (what the test-suite runs)

Everything runs on CPU, offline: the models are built from a config and the tokenizer is trained locally.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from trainwright_lint.terminal import Terminal

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "examples" / "gallery"


def banner(step: int, total: int, title: str, command: list[str]) -> None:
    """A step's title (bold on a colour terminal only: NO_COLOR and pipes get plain text) and command."""
    shown = " ".join(map(str, command))
    shown = shown.replace(f"{sys.executable} -m trainwright_lint", "trainwright").replace(
        sys.executable, "python"
    )
    shown = shown.replace(str(ROOT) + os.sep, "")
    heading = Terminal.detect(sys.stdout).style(f"[{step}/{total}] {title}", "heading")
    print(f"\n{heading}\n$ {shown}", flush=True)


def run(command: list[str], ok_codes: tuple[int, ...] = (0,)) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    result = subprocess.run(command, cwd=ROOT, env=env, check=False)
    if result.returncode not in ok_codes:
        raise SystemExit(f"tour: `{' '.join(map(str, command))}` exited with {result.returncode}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer training steps")
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "tour", help="where the runs write")
    args = parser.parse_args(argv)
    trainwright = [sys.executable, "-m", "trainwright_lint"]
    start = time.perf_counter()
    total = 5

    # The "before" files are excluded from the project's own lint run ([tool.trainwright] exclude);
    # files named explicitly are always linted.
    before_files = sorted(str(path.relative_to(ROOT)) for path in GALLERY.glob("*_before.py"))
    banner(
        1,
        total,
        "Lint a gallery of real-world Trainer overrides (exit status 1 = findings)",
        [*trainwright, "lint", f"{GALLERY}/*_before.py"],
    )
    run([*trainwright, "lint", *before_files], ok_codes=(1,))

    legacy = GALLERY / "legacy_loss_before.py"
    banner(
        2,
        total,
        "Preview the safe fix for a 4.45-era compute_loss (nothing is written)",
        [*trainwright, "fix", "--diff", legacy],
    )
    run([*trainwright, "fix", "--diff", str(legacy.relative_to(ROOT))], ok_codes=(0, 1))

    timer = GALLERY / "step_timer_before.py"
    banner(
        3,
        total,
        "Preview moving a timing wrapper into a callback (nothing is written)",
        [*trainwright, "fix", "--suggest", timer],
    )
    run([*trainwright, "fix", "--suggest", str(timer.relative_to(ROOT))], ok_codes=(0, 1))

    dpo_steps = "30" if args.quick else "120"
    dpo = [sys.executable, str(ROOT / "examples" / "dpo_toy.py"), "--steps", dpo_steps]
    banner(4, total, "DPOTrainer on a toy preference task: watch rewards/accuracies climb", dpo)
    run(dpo)

    args.out.mkdir(parents=True, exist_ok=True)
    grpo_steps = "8" if args.quick else "60"
    grpo = [
        sys.executable,
        str(ROOT / "examples" / "grpo_toy.py"),
        "--steps",
        grpo_steps,
        "--out",
        str(args.out),
    ]
    banner(5, total, "GRPOTrainer on a toy reward: watch the mean reward rise", grpo)
    run(grpo)

    pngs = sorted(args.out.glob("*.png"))
    print(f"\nTour finished in {time.perf_counter() - start:.0f} s.")
    for png in pngs:
        print(f"Reward curve: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
