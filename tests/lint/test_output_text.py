"""Text output: ``full`` (default), a headline ``path:line:col: CODE message`` then indented ``help:``
and ``note:`` lines fitted to the terminal; ``concise``, one line per finding with the whole message.
``[*]`` (as ruff prints it) on findings with a safe fix; on a colour terminal only, the code links to
the rule's page."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from trainwright_lint.finding import Finding
from trainwright_lint.output import text
from trainwright_lint.output.rule_meta import rule_url
from trainwright_lint.rules.tw401_unknown_event import RenameMethod
from trainwright_lint.rules.tw402_event_without_kwargs import AddVarKeyword
from trainwright_lint.terminal import visible


def finding(code: str, line: int, fix: object = None) -> Finding:
    return Finding(code, "name", f"message of {code}", "src/train.py", line, 5, line, 9, fix=fix)


FINDINGS = [
    finding("TW402", 4, AddVarKeyword(method="on_log", line=4)),  # safe fix
    finding("TW101", 7),  # no fix
    finding("TW401", 11, RenameMethod(method="on_batch_end", line=11, new="on_step_end")),  # unsafe fix
]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def render(stream: io.StringIO) -> list[str]:
    text.render(FINDINGS, stream)
    return stream.getvalue().splitlines()


def test_lines_and_the_safe_fix_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # colour forced, but a pipe never gets escape codes
    assert render(io.StringIO()) == [
        "src/train.py:4:5: TW402 [*] message of TW402",
        "src/train.py:7:5: TW101 message of TW101",
        "src/train.py:11:5: TW401 message of TW401",
    ]


def test_colour_and_a_link_to_the_page_on_a_colour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    first = render(Terminal())[0]
    link = f"\x1b]8;;{rule_url('TW402')}\x1b\\TW402\x1b]8;;\x1b\\"
    assert first == (
        f"\x1b[1msrc/train.py\x1b[0m:4:5: \x1b[1;31m{link}\x1b[0m \x1b[36m[*]\x1b[0m message of TW402"
    )
    assert visible(first).replace(link, "TW402") == "src/train.py:4:5: TW402 [*] message of TW402"
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in "".join(render(Terminal()))


# ---------------------------------------------------------------------------------------- full / concise

RANGE_NOTE = "on every release of the target range, 4.44.0–4.45.2"
TW201 = Finding(
    "TW201",
    "timing-logic-in-override",
    "`training_step` runs gc/cache clearing gated on the global step (lines 13–15); move it to a "
    "TrainerCallback on `on_step_end` (reference: trainwright.callbacks.MemoryCallback, which needs "
    f"transformers>=5: on 4.x copy its event code) ({RANGE_NOTE})",
    "memory_before.py",
    13,
    9,
    13,
    20,
)


def test_the_default_is_a_headline_then_help_and_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = io.StringIO()
    text.render([TW201], out)
    assert out.getvalue().splitlines() == [
        "memory_before.py:13:9: TW201 `training_step` runs gc/cache clearing gated on the global step (lines 13–15)",
        "  help: move it to a TrainerCallback on `on_step_end`",
        "  note: reference: trainwright.callbacks.MemoryCallback, which needs transformers>=5: on 4.x copy its event code",
        f"  note: {RANGE_NOTE}",
    ]


def words(message: str) -> list[str]:
    """The words of a message without the brackets and semicolons the layout turns into lines."""
    return [w.strip("();") for w in message.split() if w.strip("();")]


def test_full_output_fits_the_width_and_loses_no_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    out = io.StringIO()
    text.render([TW201], out)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 60
    assert lines[0].startswith("memory_before.py:13:9: TW201 ")
    assert all(line.startswith("  ") for line in lines[1:])  # nothing else reads as a finding
    shown = " ".join(lines).split()[2:]  # after "memory_before.py:13:9: TW201"
    assert words(" ".join(w for w in shown if w not in ("help:", "note:"))) == words(TW201.message)


def test_concise_is_one_line_per_finding_with_the_whole_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    out = io.StringIO()
    text.render_concise([TW201, FINDINGS[0]], out)
    assert out.getvalue().splitlines() == [
        f"memory_before.py:13:9: TW201 {TW201.message}",
        "src/train.py:4:5: TW402 [*] message of TW402",
    ]


def test_a_missing_fix_is_a_note_in_full_and_bracketed_in_concise() -> None:
    f = replace(FINDINGS[2], fix=None, fix_note="no fix: the class already defines `on_step_end`")
    full, concise = io.StringIO(), io.StringIO()
    text.render([f], full)
    text.render_concise([f], concise)
    assert full.getvalue().splitlines()[-1] == "  note: no fix: the class already defines `on_step_end`"
    assert concise.getvalue().endswith("message of TW401 [no fix: the class already defines `on_step_end`]\n")


def test_a_stream_that_cannot_encode_the_dash_gets_ascii() -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    text.render([TW201], out)
    text.render_concise([TW201], out)
    out.flush()
    shown = out.buffer.getvalue().decode("ascii")  # type: ignore[attr-defined]
    assert "(lines 13-15)" in shown and "4.44.0-4.45.2" in shown
