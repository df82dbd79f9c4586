"""SARIF 2.1.0 (the format GitHub code scanning and most CI dashboards ingest).

One run, tool ``trainwright`` with one ``reportingDescriptor`` per rule (id, name, short and full
description, ``helpUri`` pointing at the rule's page under ``docs/rules/``), results with relative
``artifactLocation`` URIs against ``%SRCROOT%`` (the current directory), so the same file uploads
from any checkout path. Columns are SARIF's 1-based, ``endColumn`` exclusive — the same convention as
``Finding``, so positions pass through unchanged.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from trainwright_lint import __version__
from trainwright_lint.finding import Finding
from trainwright_lint.rules import RULES

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# Where the rule pages (docs/rules/TWxxx.md, built by mkdocs) are published. The one place to change it.
RULE_DOCS_BASE_URL = "https://trainwright.readthedocs.io/en/latest/rules/"
# Diagnostics that are not rules (they come from the front end, not a rule class).
NON_RULE_CODES: dict[str, tuple[str, str]] = {
    "TW000": (
        "file-not-linted",
        (
            "The file could not be linted: it does not parse (syntax error, Python 2 code, NUL bytes, "
            "undecodable bytes), nests too deeply, or took longer than the per-file time limit."
        ),
    ),
}


def help_uri(code: str) -> str:
    return f"{RULE_DOCS_BASE_URL}{code}/"


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def rule_descriptors() -> list[dict[str, Any]]:
    descriptors: list[dict[str, Any]] = []
    for code, (name, text) in sorted(NON_RULE_CODES.items()):
        descriptors.append(
            {
                "id": code,
                "name": name,
                "shortDescription": {"text": _first_sentence(text)},
                "fullDescription": {"text": text},
                "helpUri": help_uri(code),
                "defaultConfiguration": {"level": "error"},
            }
        )
    for code, rule in sorted(RULES.items()):
        doc = inspect.cleandoc(rule.__doc__ or rule.name)
        descriptors.append(
            {
                "id": code,
                "name": rule.name,
                "shortDescription": {"text": _first_sentence(doc)},
                "fullDescription": {"text": " ".join(doc.split())},
                "help": {"text": f"See {help_uri(code)}", "markdown": rule.explain()},
                "helpUri": help_uri(code),
                "defaultConfiguration": {"level": "warning"},
            }
        )
    return descriptors


def artifact_uri(path: str, root: str | None = None) -> str:
    """``path`` relative to ``root`` (default: cwd) as a URI reference; absolute only if outside it."""
    base = Path(root or os.getcwd()).resolve()
    target = Path(path).resolve()
    try:
        rel = target.relative_to(base).as_posix()
    except ValueError:
        return target.as_uri()
    return quote(rel, safe="/")


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
            "level": "error" if f.code in NON_RULE_CODES else "warning",
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
                        "informationUri": RULE_DOCS_BASE_URL,
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


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    json.dump(to_sarif(findings), stream, indent=2)
    stream.write("\n")
