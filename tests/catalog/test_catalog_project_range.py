"""``hooks`` and ``explain`` describe what ``trainwright lint`` checks: the project's declared range,
resolved by the same code, named with where it came from. A 4.44-4.46 project is not shown 5.24's
events (``on_push_begin``), and what only part of the range has is marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trainwright_lint.cli import main

PINNED = '[project]\nname = "user"\nversion = "0"\ndependencies = ["transformers>=4.44,<4.46"]\n'
RANGE = "transformers >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2"


@pytest.fixture
def pinned_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(PINNED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_hooks_events_are_the_ranges(pinned_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "hooks", "--events")
    assert code == 0
    assert out.startswith(
        f"TrainerCallback events in transformers 4.45.2, the newest release of {RANGE.split(' ', 1)[1]}"
    )
    assert "on_push_begin" not in out  # a 5.x event
    assert "on_pre_optimizer_step +" in out  # from 4.45.0: not on 4.44.x
    assert "not an event on every release of the target range (4.44.0–4.45.2): on_pre_optimizer_step" in out
    data = json.loads(run(capsys, "hooks", "--events", "--format", "json")[1])
    assert data["version"] == "4.45.2" and data["target"]["source"] == "pyproject.toml"
    assert data["target"]["releases"][0] == "4.44.0" and data["target"]["releases"][-1] == "4.45.2"
    assert {e["name"]: e["in_whole_range"] for e in data["events"]}["on_pre_optimizer_step"] is False


def test_the_option_still_wins(pinned_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "hooks", "--events", "--transformers-version", "5.24.0")
    assert "on_push_begin" in out and "(--transformers-version)" in out


def test_explain_judges_every_release_of_the_range(
    pinned_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "explain", "on_pre_optimizer_step")
    assert f"Target: {RANGE}" in out
    assert "NOT AN EVENT on 4.44.0–4.44.2 of the target range" in out
    _, out, _ = run(capsys, "explain", "on_push_begin")
    assert "NOT AN EVENT on any release of the target range (4.44.0–4.45.2)" in out
    _, out, _ = run(capsys, "explain", "compute_loss")
    history = out.split("Signature history:")[1].split("Advice")[0]
    assert "return_outputs=False)  <- target" in history  # 4.36.0 .. 4.45.2: the range's signature
    assert "num_items_in_batch=None)  <- target" not in history  # from 4.46.0: outside the range
    report = json.loads(run(capsys, "explain", "get_batch_samples", "--format", "json")[1])
    assert (
        report["not_defined_on"] == report["target_releases"]
        and report["target"]["source"] == "pyproject.toml"
    )


def test_a_remapped_release_is_said(pinned_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (pinned_project / "pyproject.toml").write_text(PINNED.replace(">=4.44,<4.46", "==4.46.2"))
    code, out, err = run(capsys, "explain", "on_log")
    assert code == 0 and "(pyproject.toml) → 4.46.1" in out
    assert (
        "trainwright explain: warning: transformers ==4.46.2 (pyproject.toml) is not a catalogued release"
        in err
    )
