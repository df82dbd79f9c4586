"""``trainwright hooks`` and ``trainwright explain``, run through the real console-script entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import trainwright_lint.commands.hooks as hooks_module
from trainwright_lint.cli import main

from trainwright.catalog import load_catalog

NEWEST = load_catalog().newest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------------- explain


def test_explain_compute_loss_shows_num_items_in_batch_arrival_and_advice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "explain", "compute_loss", "--transformers-version", NEWEST)
    assert code == 0
    history = out.split("Signature history:")[1].split("Advice")[0]
    assert "4.36.0 .. 4.45.2" in history and "(self, model, inputs, return_outputs=False)" in history
    assert "4.46.0 .. now" in history and "num_items_in_batch=None)  <- target" in history
    assert "training_step: 2 positional; keywords num_items_in_batch" in out
    assert "Advice: subclass and override" in out
    assert "compute_loss_func" in out and "**kwargs" in out
    assert "https://github.com/huggingface/transformers/issues/36331" in out


def test_explain_maybe_log_save_evaluate_recommends_callback_events(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "explain", "_maybe_log_save_evaluate")
    assert code == 0
    assert "private method" in out and "Advice: do not override this" in out
    events_line = next(line for line in out.splitlines() if "Callback events:" in line)
    for event in ("on_step_end", "on_epoch_end", "on_evaluate", "on_save", "on_log"):
        assert event in events_line
    assert "ControlScheduleCallback" in out
    assert out.count("(self, tr_loss") == 4  # four signatures across the catalogued releases


def test_explain_marks_absent_and_uncalled_methods(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "explain", "get_batch_samples", "--transformers-version", "4.45.2")
    assert "NOT DEFINED at 4.45.2" in out
    _, out, _ = run(capsys, "explain", "create_optimizer_and_scheduler", "--transformers-version", "5.2.0")
    assert "NOT CALLED by transformers at 5.2.0" in out and "not called by the Trainer in 5.1.0 .. now" in out
    _, out, _ = run(capsys, "explain", "create_optimizer_and_scheduler", "--transformers-version", "5.0.0")
    assert "NOT CALLED" not in out


def test_explain_event(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "on_save", "--transformers-version", "4.45.2")
    assert code == 0
    assert "TrainerCallback.on_save" in out and "checkpoint" in out
    assert "tokenizer" in out  # 4.45 passes tokenizer=, not processing_class=
    code, out, _ = run(capsys, "explain", "on_push_begin", "--transformers-version", "4.57.6")
    assert "NOT AN EVENT at 4.57.6" in out


def test_explain_accepts_qualified_names(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "explain", "Seq2SeqTrainer.prediction_step")
    assert out.startswith("Seq2SeqTrainer.prediction_step") and "gen_kwargs" in out
    _, out, _ = run(capsys, "explain", "self._save_checkpoint()")
    assert out.startswith("Trainer._save_checkpoint")


def test_explain_unknown_name_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "on_batch_end")
    assert code == 2 and out == ""
    assert "TrainerCallback has no such event" in err
    assert "did you mean:" in err and "on_step_end" in err
    code, _, err = run(capsys, "explain", "compute_los")
    assert code == 2 and "compute_loss" in err.split("did you mean:")[1]


def test_explain_rule_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "explain", "TW999")
    assert code == 2 and "unknown rule 'TW999'" in err
    try:
        from trainwright_lint.rules import RULES
    except ImportError:
        return
    known = min(RULES)
    code, out, _ = run(capsys, "explain", known.lower())
    assert code == 0 and known in out


def test_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "explain", "log", "--format", "json", "--transformers-version", "4.47.0")
    report = json.loads(out)
    assert report["kind"] == "method" and report["target_version"] == "4.47.0"
    target = [s for s in report["signatures"] if s["target"]]
    assert [s["signature"] for s in target] == ["(self, logs, start_time=None)"]


def test_bad_version_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "hooks", "--transformers-version", "five")
    assert code == 2 and out == "" and "not a PEP 440 version: 'five'" in err


# --------------------------------------------------------------------------------------------- hooks


def _rows(out: str) -> dict[str, str]:
    """First table line of each method row: name (without marks) -> the line."""
    table = out.split("\n---", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[1:]:
        if line and not line.startswith(" "):
            rows[line.split()[0]] = line
    return rows


def test_hooks_445_differs_from_newest_where_history_says(capsys: pytest.CaptureFixture[str]) -> None:
    _, old, _ = run(capsys, "hooks", "--transformers-version", "4.45.2", "--private")
    _, new, _ = run(capsys, "hooks", "--transformers-version", NEWEST, "--private")
    old_rows, new_rows = _rows(old), _rows(new)
    cat = load_catalog()
    assert set(old_rows) == set(cat.at("4.45.2").methods())
    assert set(new_rows) == set(cat.at(NEWEST).methods())
    assert "get_batch_samples" in new_rows and "get_batch_samples" not in old_rows
    assert "prediction_loop" in old_rows and "prediction_loop" not in new_rows
    assert "(self, model, inputs, return_outputs=False)" in old_rows["compute_loss"]
    assert "num_items_in_batch" not in old
    assert "NOT CALLED by Trainer at" in new and "NOT CALLED" not in old
    assert "create_optimizer_and_scheduler !" in new


def test_hooks_default_hides_private_but_names_the_hot_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "hooks", "--transformers-version", NEWEST)
    assert code == 0
    rows = _rows(out)
    assert "compute_loss" in rows and not any(
        name.startswith("_") and not name.startswith("__") for name in rows
    )
    assert "private methods hidden" in out and "_save_checkpoint" in out


def test_hooks_fits_120_columns(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["hooks", "--private"],
        ["hooks", "--events"],
        ["hooks", "--class", "Seq2SeqTrainer"],
        ["explain", "compute_loss"],
        ["explain", "on_log"],
    ):
        _, out, _ = run(capsys, *argv)
        too_long = [
            line for line in out.splitlines() if len(line) > 120 and not line.startswith("  https://")
        ]
        assert not too_long, argv


def test_hooks_events(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "hooks", "--events", "--transformers-version", "4.44.2")
    assert "on_optimizer_step" in out and "on_pre_optimizer_step" not in out
    assert "should_training_stop" in out and "tokenizer" in out
    _, out, _ = run(capsys, "hooks", "--events", "--format", "json")
    data = json.loads(out)
    assert [e["order"] for e in data["events"]] == sorted(e["order"] for e in data["events"])
    assert next(e for e in data["events"] if e["name"] == "on_log")["extra_kwargs"] == ["logs"]


def test_hooks_json_and_default_target(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hooks_module, "installed_version", lambda dist="transformers": "4.46.2")
    _, out, _ = run(capsys, "hooks", "--format", "json")
    data = json.loads(out)
    assert data["version"] == "4.46.1"
    row = next(m for m in data["methods"] if m["name"] == "training_step")
    assert row["signature"] == "(self, model, inputs, num_items_in_batch=None)"
    assert row["call_sites"] == ["_inner_training_loop: 3 positional"]
    monkeypatch.setattr(hooks_module, "installed_version", lambda dist="transformers": None)
    _, out, _ = run(capsys, "hooks")
    assert f"transformers is not installed; using the newest catalogued release {NEWEST}" in out


def test_console_script_runs_without_importing_torch() -> None:
    code = (
        "import sys\n"
        "from trainwright_lint.cli import main\n"
        "main(['hooks', '--private']); main(['explain', 'compute_loss'])\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.parametrize("argv", [["hooks", "--help"], ["explain", "--help"]])
def test_help_mentions_version_default(capsys, argv) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(argv)
    assert "installed" in capsys.readouterr().out
