"""``trainwright explain save_model`` says which callback events fire on each of its call paths (issue 33)."""

from __future__ import annotations

import json

import pytest
from trainwright_lint.cli import main


@pytest.fixture(autouse=True)
def plain(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)


def test_explain_save_model_names_the_paths_where_on_save_does_not_fire(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "save_model", "--transformers-version", "5.24.0"]) == 0
    out = capsys.readouterr().out
    section = out.split("Callback events around it (transformers 5.24.0), per call path:")[1]
    assert "save_model (called directly): NO event fires around it" in section
    assert "push_to_hub -> save_model: push_to_hub fires before on_push_begin" in section
    # in the loop, on_save fires after _save_checkpoint, two callers up
    assert (
        "_save_checkpoint -> save_model: _save_checkpoint fires after on_push_begin; "
        "_maybe_log_save_evaluate fires before" in section
    )
    on_save = next(line for line in section.splitlines() if line.strip().startswith("on_save"))
    assert "do NOT fire around it on save_model (called directly)" in on_save
    assert "fires on every path: none" in section


def test_explain_json_has_the_event_paths(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "_save_checkpoint", "--transformers-version", "5.24.0", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)["events"]
    loop = [p for p in report["paths"] if p["entry"] == "train"]
    assert loop and all(
        p["callers"][0]
        == {"caller": "_maybe_log_save_evaluate", "before": p["callers"][0]["before"], "after": ["on_save"]}
        for p in loop
    )
    jit = [p for p in report["paths"] if p["opt_in"]]
    assert jit and all(p["callers"] == [] for p in jit)  # the SIGTERM checkpoint fires no event


@pytest.mark.parametrize("method", ["save_model", "_save"])
def test_save_advice_never_sends_files_to_on_save(method: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Condition 1 of issue 33: on_save fires on none of save_model's paths but the checkpoint's, so the
    advice (guidance.json, echoed by explain) must not suggest it for files written when saving."""
    from trainwright.catalog.events import load_events

    assert not load_events().at("5.24.0").fires_on_every_path(method, "on_save")
    assert main(["explain", method, "--transformers-version", "5.24.0"]) == 0
    advice = capsys.readouterr().out.split("Advice:")[1]
    assert "Callback events: on_save" not in advice
    assert "belong in on_save" not in advice
    if method == "save_model":
        assert "on_save fires only after a training checkpoint" in " ".join(advice.split())
