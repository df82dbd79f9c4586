"""SARIF 2.1.0 (the format GitHub code scanning and most CI dashboards ingest).

One run, tool ``trainwright`` with one ``reportingDescriptor`` per code: ``shortDescription`` (the
first sentence of the rule docstring's first paragraph), ``fullDescription`` (that paragraph), ``help``
(the rule's page: ``markdown`` is ``Rule.explain()``, what ``trainwright explain TWxxx`` prints and
``docs/rules/`` holds; ``text`` the same without Markdown markup), ``helpUri`` (the page's URL, the
``url`` of the JSON output) and ``properties.tags`` (the rule family, plus ``fixable``). Results carry
relative ``artifactLocation`` URIs against ``%SRCROOT%`` (the current directory), so the same file
uploads from any checkout path. Columns are SARIF's 1-based, ``endColumn`` exclusive — the same
convention as ``Finding``, so positions pass through unchanged.
"""

from __future__ import annotations

import inspect
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from trainwright_lint import __version__
from trainwright_lint.finding import Finding
from trainwright_lint.output.rule_meta import (
    NON_RULE_CODES,
    PROJECT_URL,
    RULE_DOCS_BASE_URL,
    rule_tags,
    rule_url,
    severity,
)
from trainwright_lint.rules import RULES

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"

__all__ = ["NON_RULE_CODES", "RULE_DOCS_BASE_URL", "help_uri", "render", "rule_descriptors", "to_sarif"]


def help_uri(code: str) -> str:
    """The page of ``code``; for ``""``, the folder of all the pages (``scripts/gen_rule_docs.py``
    links it from the index)."""
    return rule_url(code) if code else RULE_DOCS_BASE_URL


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def _first_paragraph(doc: str) -> str:
    return " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split())


_HEADING = re.compile(r"^#+ ")
_AUTOLINK = re.compile(r"<(https?://[^>]+)>")


def markdown_as_text(markdown: str) -> str:
    """The page without Markdown markup for ``help.text``, which viewers show verbatim: heading marks
    and autolink brackets dropped, fenced code indented by four spaces instead of fenced."""
    out: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            out.append(f"    {line}" if line else "")
        else:
            out.append(_AUTOLINK.sub(r"\1", _HEADING.sub("", line)))
    return "\n".join(out).strip() + "\n"


def _descriptor(code: str, name: str, summary: str, page: str) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "id": code,
        "name": name,
        "shortDescription": {"text": _first_sentence(summary)},
        "fullDescription": {"text": summary},
        "help": {"text": f"{markdown_as_text(page)}\nRule page: {rule_url(code)}\n", "markdown": page},
        "helpUri": rule_url(code),
        "defaultConfiguration": {"level": severity(code)},
    }
    tags = rule_tags(code)
    if tags:
        descriptor["properties"] = {"tags": tags}
    return descriptor


def rule_descriptors() -> list[dict[str, Any]]:
    descriptors = [
        _descriptor(code, name, text, f"# {code} {name}\n\n{text}\n")
        for code, (name, text) in sorted(NON_RULE_CODES.items())
    ]
    for code, rule in sorted(RULES.items()):
        descriptors.append(
            _descriptor(code, rule.name, _first_paragraph(rule.__doc__ or rule.name), rule.explain())
        )
    return descriptors


def artifact_uri(path: str, root: str | None = None) -> str:
    """``path`` relative to ``root`` (default: cwd) as a URI reference; absolute only if outside it.
    A relative ``path`` is already relative to the root (the front ends show paths that way). The
    name's bytes are percent-encoded (``os.fsencode``), so a name that is not valid UTF-8 gives
    ``%FF`` rather than a crash, and control characters never appear raw."""
    if not os.path.isabs(path):
        return quote(os.fsencode(Path(path).as_posix()), safe="/")
    base = Path(root or os.getcwd()).resolve()
    target = Path(path).resolve()
    try:
        rel = target.relative_to(base).as_posix()
    except ValueError:
        return target.as_uri()
    return quote(os.fsencode(rel), safe="/")


def to_sarif(findings: Sequence[Finding], root: str | None = None) -> dict[str, Any]:
    rules = rule_descriptors()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for f in findings:
        region: dict[str, Any] = {"startLine": max(1, f.line), "startColumn": max(1, f.column)}
        if f.end_line >= f.line:
            region["endLine"] = f.end_line
            if f.end_column >= 1 and (f.end_line > f.line or f.end_column >= f.column):
                region["endColumn"] = f.end_column
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": severity(f.code),
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": artifact_uri(f.path, root), "uriBaseId": "%SRCROOT%"},
                        "region": region,
                    }
                }
            ],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.class_name or f.method:
            result["properties"] = {"class": f.class_name, "method": f.method}
        results.append(result)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trainwright",
                        "version": __version__,
                        "informationUri": PROJECT_URL,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {
                    "%SRCROOT%": {"uri": Path(root or os.getcwd()).resolve().as_uri() + "/"}
                },
                "results": results,
            }
        ],
    }


def render(findings: Sequence[Finding], stream: TextIO, root: str | None = None) -> None:
    """``root``: the project root the (relative) paths start from, which ``%SRCROOT%`` names."""
    json.dump(to_sarif(findings, root), stream, indent=2)
    stream.write("\n")
