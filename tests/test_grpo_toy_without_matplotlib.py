"""``examples/grpo_toy.py`` without matplotlib (an optional extra): it trains, prints the curve, says
plainly that no plot was made, and exits 0 (it used to end in a ``ModuleNotFoundError`` traceback
after training). matplotlib is hidden by a package of that name that refuses to import, first on the
path, as on a machine where it is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.train("the example trains GRPO")
def test_grpo_toy_without_matplotlib(tmp_path: Path) -> None:
    blocker = tmp_path / "blocked" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'matplotlib\'", name="matplotlib")\n'
    )
    paths = [str(tmp_path / "blocked"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "grpo_toy.py"),
            "--steps",
            "4",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p), "OMP_NUM_THREADS": "1"},
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "matplotlib is not installed, so no reward_curve.png" in result.stdout
    assert "step  mean reward" in result.stdout and "4 generate calls for 4 steps" in result.stdout
    assert (tmp_path / "out" / "completions.jsonl").is_file()  # it trained
    assert not (tmp_path / "out" / "reward_curve.png").exists()
