"""The README's first command ends in examples/tour.py: it must run start to finish on a fresh checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.train("the tour trains DPO and GRPO")
def test_tour_runs_end_to_end(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tour.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "TW202" in out and "TW301" in out  # the gallery findings
    assert "num_items_in_batch" in out  # the fix diff for the 4.45-era compute_loss
    assert "class " in out and "TrainerCallback" in out  # the suggested callback
    assert "held-out rewards/accuracies" in out  # the DPO run
    png = tmp_path / "reward_curve.png"
    assert png.exists() and png.stat().st_size > 1000
    assert f"Reward curve: {png}" in out
    assert "\x1b[" not in out  # a pipe gets no colour codes


def test_banner_honours_no_color_and_pipes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tour's headings are bold on a colour terminal only (NO_COLOR, https://no-color.org, wins)."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import tour
    finally:
        sys.path.pop(0)
    monkeypatch.setenv("FORCE_COLOR", "1")
    tour.banner(1, 5, "Lint", ["trainwright", "lint"])
    assert "\x1b[1m[1/5] Lint\x1b[0m" in capsys.readouterr().out  # forced: the style is there to remove
    monkeypatch.setenv("NO_COLOR", "1")
    tour.banner(1, 5, "Lint", ["trainwright", "lint"])
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.delenv("FORCE_COLOR")
    tour.banner(2, 5, "Fix", ["trainwright", "fix"])  # captured: not a terminal
    out = capsys.readouterr().out
    assert "\x1b" not in out and "[1/5] Lint" in out and "[2/5] Fix" in out
