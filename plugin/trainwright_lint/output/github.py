"""GitHub Actions workflow commands: one ``::warning file=...,line=...::message`` per finding, which
the Actions runner turns into annotations on the pull request's diff.

Property values and the message are escaped as the runner expects (``%``, CR, LF everywhere; ``:``
and ``,`` in properties too), otherwise a message containing a newline or a path containing a comma
would be cut short. Other control characters and bidirectional overrides are then shown escaped
(``terminal.shown_safely``): a log viewer must not obey them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from trainwright_lint.finding import Finding
from trainwright_lint.output.rule_meta import severity
from trainwright_lint.terminal import shown_safely


def escape_data(text: str) -> str:
    """The runner's escapes, then what is left that a log viewer would obey shown escaped."""
    return shown_safely(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    level = {"note": "notice"}.get(severity(f.code), severity(f.code))  # GitHub's word for a note
    props = [
        f"file={escape_property(f.path)}",
        f"line={f.line}",
        f"col={f.column}",
        f"endLine={f.end_line}",
    ]
    if f.end_line == f.line:
        props.append(f"endColumn={f.end_column}")
    props.append(f"title={escape_property(f'{f.code} {f.name}')}")
    return f"::{level} {','.join(props)}::{escape_data(f'{f.code} {f.message}')}"


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    stream.writelines(annotation(f) + "\n" for f in findings)
