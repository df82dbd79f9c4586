"""flake8-compatible text: ``path:line:column: CODE message``, one finding per line.

As ruff does, a finding with a safe fix (one ``trainwright fix`` applies without ``--unsafe-fixes``)
reads ``CODE [*] message``; one whose rule has a fix that is not safe here ends with the reason
(``[no fix: the class already defines `on_step_end` ...]``). On a colour terminal (see :mod:`trainwright_lint.terminal`) the code is a
hyperlink to the rule's page (OSC 8: invisible where unsupported); a pipe gets the plain line, so
editors and problem matchers parse it as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from trainwright_lint.finding import Finding
from trainwright_lint.output.fix_record import has_safe_fix
from trainwright_lint.output.rule_meta import rule_url
from trainwright_lint.terminal import Terminal


def hyperlink(text: str, url: str) -> str:
    return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"


def line(f: Finding, links: bool = False) -> str:
    code = hyperlink(f.code, rule_url(f.code)) if links else f.code
    marker = " [*]" if has_safe_fix(f.fix) else ""
    why_not = f" [{f.fix_note}]" if f.fix is None and f.fix_note else ""
    return f"{f.path}:{f.line}:{f.column}: {code}{marker} {f.message}{why_not}"


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    links = Terminal.detect(stream).colour and stream.isatty()
    stream.writelines(line(f, links) + "\n" for f in findings)
