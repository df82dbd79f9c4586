"""examples/grpo_calculator_tool.py runs start to finish: the reward rises and the curve is saved as a PNG."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[3]


def test_calculator_example_learns_to_call_the_tool(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "grpo_calculator_tool.py"),
            "--steps",
            "12",
            "--out",
            str(tmp_path),
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rewards = [
        float(m.group(1)) for m in re.finditer(r"^\s*\d+\s+([0-9.]+)\s+[0-9.]+", out.stdout, re.MULTILINE)
    ]
    assert len(rewards) == 3
    assert rewards[-1] > rewards[0] + 0.25, out.stdout
    assert (tmp_path / "reward_curve.png").stat().st_size > 1000
