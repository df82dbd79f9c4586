"""``trainwright fix`` has a bounded cost: a file with a 100,000-element list literal and one fixable
TW301 is fixed in a fresh process whose peak memory stays under 210 MB (libcst sees only the method
it edits). Measured: 196.8 MB at 1281dd5, 201.7 MB after the 2026-12-06 merges (the 85-release catalogue
and events table, the TW001 noqa pass, the fixer's snapshot check); a libcst tree of the whole file
alone costs 407 MB, so the bound still fails the regression it guards against. Time is left to ``benchmarks/lint_scaling.py``: on a shared CI machine a memory bound
is a reliable test, a time bound is not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fix_fs_support import TARGET

TRAINWRIGHT = [sys.executable, "-m", "trainwright_lint"]  # the `trainwright` program, this interpreter
LIMIT_MB = 210

# Runs argv[1:] as its only child and reports that child's peak RSS (RUSAGE_CHILDREN is the maximum
# over the children a process has waited for, so a wrapper of its own isolates this one run).
WRAPPER = r"""
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": done.returncode, "kib": peak, "err": done.stderr[-2000:]}))
"""


def big_literal_file(n: int = 100_000) -> str:
    items = "".join(f"    {i},\n" for i in range(n))
    return (
        "from transformers import Trainer\n\n"
        f"TABLE = [\n{items}]\n\n\n"
        "class LossTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        return super().compute_loss(model, inputs, return_outputs)\n"
    )


def test_fix_of_a_100k_literal_file_stays_under_210_mb(tmp_path: Path) -> None:
    path = tmp_path / "big.py"
    source = big_literal_file()
    path.write_text(source, encoding="utf-8")
    cmd = [*TRAINWRIGHT, "fix", "--transformers-version", TARGET, "-j", "1", str(path)]
    done = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True, check=True)
    row = json.loads(done.stdout)
    assert row["rc"] == 0, row["err"]
    fixed = path.read_text(encoding="utf-8")
    assert "return_outputs=False, num_items_in_batch=None):" in fixed
    assert (
        fixed.replace(", num_items_in_batch=None", "").replace(", num_items_in_batch=num_items_in_batch", "")
        == source
    )  # the other 100,000 lines are untouched
    assert row["kib"] / 1024 < LIMIT_MB, f"peak RSS {row['kib'] / 1024:.0f} MB"
