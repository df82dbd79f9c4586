"""Output formats, one module per format, each exposing ``render(findings, stream) -> None``.

Add a format by adding a module and a line to ``FORMATS`` (SARIF and GitHub annotations come with a
later issue).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TextIO

from trainwright_lint.finding import Finding
from trainwright_lint.output import github, json_format, sarif, text

Renderer = Callable[[Sequence[Finding], TextIO], None]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
