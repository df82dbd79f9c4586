"""Output formats, one module per format, each exposing ``render(findings, stream) -> None``.

Add a format by adding a module and a line to ``FORMATS``. What the formats share lives beside them:
``rule_meta`` (rule page URL, severity, tags, fixable rules) and ``fix_record`` (a finding's fix as
ruff reports it), so that text, JSON and SARIF never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from trainwright_lint.finding import Finding
from trainwright_lint.output import github, json_format, sarif, text

Renderer = Callable[[Sequence[Finding], TextIO], None]

FORMATS: dict[str, Renderer] = {
    "full": text.render,
    "concise": text.render_concise,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}


# ``--format`` (the older option) spells ``full`` as ``text``.
FORMAT_ALIASES = {"text": "full"}


def write_findings(fmt: str, findings: Sequence[Finding], stream: TextIO, root: str) -> None:
    """Render ``findings`` (paths relative to ``root``) in format ``fmt``. SARIF alone records the root
    (``%SRCROOT%``), so that a viewer resolves the relative paths wherever the command ran."""
    if fmt == "sarif":
        sarif.render(findings, stream, root=root)
    else:
        FORMATS[FORMAT_ALIASES.get(fmt, fmt)](findings, stream)
