"""``--format text``: flake8's ``path:line:col: CODE message``; ``[*]`` (as ruff prints it) on findings
with a safe fix; on a colour terminal only, the code links to the rule's page."""

from __future__ import annotations

import io

import pytest
from trainwright_lint.edits import AddVarKeyword, RenameMethod
from trainwright_lint.finding import Finding
from trainwright_lint.output import text
from trainwright_lint.output.rule_meta import rule_url


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


def test_code_links_to_its_page_on_a_colour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    first = render(Terminal())[0]
    assert (
        first
        == f"src/train.py:4:5: \x1b]8;;{rule_url('TW402')}\x1b\\TW402\x1b]8;;\x1b\\ [*] message of TW402"
    )
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in "".join(render(Terminal()))
