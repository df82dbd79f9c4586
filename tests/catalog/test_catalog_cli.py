"""``trainwright hooks`` and ``trainwright explain``, run through the real console-script entry point."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter

import pytest
import trainwright_lint.commands.hooks as hooks_module
from trainwright_lint.cli import main

from trainwright.catalog import Guidance, load_catalog

NEWEST = load_catalog().newest


@pytest.fixture(autouse=True)
def plain_80_columns(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The layout these tests read: 80 columns (capsys is not a terminal), no colour forced by the CI;
    run outside any project (the commands describe the project's range: tests/catalog/
    test_catalog_project_range.py), so the target is the installed release."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)


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
    assert code == 2 and out == "" and '"five" is not a version or a version range' in err


# --------------------------------------------------------------------------------------------- hooks


def _rows(out: str) -> dict[str, str]:
    """Each method row of the table, its wrapped lines joined: name (without marks) -> the row's text."""
    table = out.split("\n---", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in table.splitlines()[1:]:
        if line and not line.startswith(" "):
            rows[line.split()[0]] = [line]
        elif rows:
            rows[next(reversed(rows))].append(line)
    return {name: " ".join(" ".join(lines).split()) for name, lines in rows.items()}


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


# ------------------------------------------------------------------------------------- terminal layout

LAYOUT_COMMANDS = [
    ["hooks"],
    ["hooks", "--events"],
    ["explain", "compute_loss"],
    ["hooks", "--private"],
    ["hooks", "--class", "Seq2SeqTrainer"],
    ["hooks", "--events", "--transformers-version", "4.36.0"],
    ["explain", "_maybe_log_save_evaluate"],
    ["explain", "on_log"],
]


def _at(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int, *argv: str) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return out


def _lone_url(line: str) -> bool:
    return len(line.split()) == 1 and line.strip().startswith("https://")


def _words(text: str) -> Counter[str]:
    return Counter(w for w in text.split() if w.strip("-"))  # a rule of dashes is as wide as its column


@pytest.mark.parametrize("width", [60, 80, 100, 132])
@pytest.mark.parametrize("argv", LAYOUT_COMMANDS, ids=" ".join)
def test_output_fits_the_terminal_width(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int, argv: list[str]
) -> None:
    out = _at(capsys, monkeypatch, width, *argv)
    # Only an unbreakable token may overflow: an evidence URL alone on its line (at 60 columns).
    too_long = [line for line in out.splitlines() if len(line) > width and not _lone_url(line)]
    assert not too_long, too_long[:3]
    if width >= 80:
        assert max(len(line) for line in out.splitlines()) <= width
    assert "\x1b[" not in out  # not a terminal: no colour


@pytest.mark.parametrize("argv", LAYOUT_COMMANDS, ids=" ".join)
def test_wrapping_never_splits_a_word(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    """At 40..100 columns the output has exactly the words of the unwrapped text (10,000 columns), each
    as often: lines break at spaces only, so a split identifier would show up as two fragments that are
    not words of the source, and a dropped word as a missing one."""
    source = _words(_at(capsys, monkeypatch, 10_000, *argv))
    for width in (40, 60, 80, 100):
        out = _words(_at(capsys, monkeypatch, width, *argv))
        assert out == source, (width, sorted((out - source) + (source - out))[:6])


def _catalogued_names() -> list[str]:
    cat = load_catalog()
    return (
        sorted(cat.method_names("Trainer"))
        + [f"Seq2SeqTrainer.{n}" for n in sorted(cat.method_names("Seq2SeqTrainer"))]
        + sorted(cat.event_names())
    )


def test_explain_every_catalogued_name_fits_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _catalogued_names()
    assert len(names) > 200
    for name in names:
        out = _at(capsys, monkeypatch, 80, "explain", name)
        # Only an unbreakable token (an evidence URL) may overflow; none does in today's catalogue.
        too_long = [line for line in out.splitlines() if len(line) > 80]
        assert not too_long, (name, too_long)


def test_explain_breaks_long_signatures_after_commas(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _at(capsys, monkeypatch, 80, "explain", "__init__")
    history = out.split("Signature history:\n")[1].split("\n\n")[0].splitlines()
    assert len(history) > 4
    for line, following in itertools.pairwise(history):
        if following.startswith(" " * 21):  # a continuation line, aligned under the first parameter
            assert line.rstrip().endswith(","), line


def test_headers_say_what_the_release_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import trainwright.catalog as catalog_module

    monkeypatch.setattr(catalog_module, "installed_version", lambda dist="transformers": None)
    code, out, err = run(capsys, "hooks", "--events")
    assert out.startswith(
        f"TrainerCallback events in transformers {NEWEST} (newest catalogued, no requirement"
    )
    assert "warning: no version requirement on transformers found" in err  # said, as `lint` says it
    monkeypatch.setattr(catalog_module, "installed_version", lambda dist="transformers": NEWEST)
    out = _at(capsys, monkeypatch, 132, "hooks", "--events")
    assert out.startswith(f"TrainerCallback events in transformers {NEWEST} (installed), in firing order")
    out = _at(capsys, monkeypatch, 132, "explain", "log")
    assert f"\nTarget: transformers {NEWEST} (installed)\n" in out
    code, out, err = run(capsys, "explain", "log", "--transformers-version", "4.46.2")
    assert code == 0 and "Target: transformers 4.46.2 (--transformers-version) → 4.46.1" in " ".join(
        out.split()
    )
    assert "is not a catalogued release; checking 4.46.1" in err  # never remapped silently
    code, out, err = run(capsys, "explain", "log", "--transformers-version", "4.46.2", "--format", "json")
    target = json.loads(out)["target"]
    assert target["releases"] == ["4.46.1"] and "4.46.1" in target["warnings"][0]
    for outside in ("4.0.0", "9.9.9"):
        code, out, err = run(capsys, "explain", "log", "--transformers-version", outside)
        assert code == 2 and out == "" and "is outside the catalogue" in err


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "compute_loss",
            "verdict: override is fine, keep this signature; or set arguments compute_loss_func",
        ),
        (
            "_save_checkpoint",
            (
                "verdict: use a TrainerCallback instead: on_save; or override save_model; or set "
                "arguments save_strategy"
            ),
        ),
        ("create_optimizer", "verdict: set an argument instead: optimizer_cls_and_kwargs, optimizers, optim"),
        (
            "create_optimizer_and_scheduler",
            (
                "verdict: do not override; instead override create_optimizer, "
                "create_scheduler; or set arguments optimizers"
            ),
        ),
        ("call_model_init", "→ instead: model_init=."),
    ],
)
def test_advice_lines_say_what_to_do(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, expected: str
) -> None:
    """Every verdict of the catalogue reads as an instruction, never a bare "avoid: create_optimizer"."""
    out = _at(capsys, monkeypatch, 132, "hooks", "--private", "--transformers-version", NEWEST)
    row = _rows(out)[name]
    assert expected in row, row
    assert not any(f"{verdict}: " in out for verdict in ("avoid", "-> argument", "-> callback"))


def test_every_verdict_has_an_instruction() -> None:
    cat = load_catalog()
    verdicts = {cat.guidance(n).verdict for n in cat.guidance_names()}  # type: ignore[union-attr]
    assert verdicts == set(hooks_module.VERDICTS)
    for name in cat.guidance_names():
        verdict = cat.guidance(name).verdict  # type: ignore[union-attr]
        text = hooks_module.short_alternative(cat, name)
        assert text.startswith(f"verdict: {hooks_module.VERDICTS[verdict][0]}"), text
    bare = Guidance(name="x", verdict="avoid", summary="")
    assert hooks_module.verdict_text(bare, "gather_for_metrics(...)") == (
        "verdict: do not override; instead: gather_for_metrics(...)"
    )
    assert hooks_module.verdict_text(bare) == "verdict: do not override"


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
    import trainwright.catalog as catalog_module

    monkeypatch.setattr(catalog_module, "installed_version", lambda dist="transformers": "4.46.2")
    _, out, _ = run(capsys, "hooks", "--format", "json")
    data = json.loads(out)
    assert data["version"] == "4.46.1" and data["target"]["source"] == "installed"
    row = next(m for m in data["methods"] if m["name"] == "training_step")
    assert row["signature"] == "(self, model, inputs, num_items_in_batch=None)"
    assert row["call_sites"] == ["_inner_training_loop: 3 positional"]
    monkeypatch.setattr(catalog_module, "installed_version", lambda dist="transformers": None)
    _, out, _ = run(capsys, "hooks")
    assert " ".join(out.split()).startswith(
        f"Trainer methods in transformers {NEWEST} (newest catalogued, no requirement found): "
    )


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
    out = capsys.readouterr().out
    assert "installed" in out
    assert "NO_COLOR" in out and "FORCE_COLOR" in out and "COLUMNS" in out
