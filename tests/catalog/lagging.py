"""A copy of the ``trainwright`` package whose catalogue lags one release behind the shipped one.

Why: the run-time additions (the installed release when it is newer than the catalogue, ``catalog add``)
only act on a release newer than the catalogue; the day a release ships, that is the real situation, and
these tests rebuild it by dropping the newest release from the shipped documents (the inverse of
:mod:`trainwright.catalog.additions`, checked against it in ``test_catalog_newer_release``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "trainwright"
DATA = SRC / "catalog" / "data"
FACTS = ("fingerprints", "modules", "arguments")


def read(library: str = "transformers") -> dict[str, dict[str, Any]]:
    """The shipped documents: ``""`` (the main one) and each fact."""
    docs = {"": json.loads((DATA / f"{library}.json").read_text(encoding="utf-8"))}
    for fact in FACTS:
        docs[fact] = json.loads((DATA / f"{library}-{fact}.json").read_text(encoding="utf-8"))
    return docs


def _clip(spans: list[list[Any]], dropped: str, newest: str) -> list[list[Any]]:
    out = []
    for span in spans:
        if span[0] == dropped:
            continue
        out.append([span[0], newest if span[1] == dropped else span[1], *span[2:]])
    return out


def _clip_map(spans_by_key: dict[str, list[list[Any]]], dropped: str, newest: str) -> dict[str, Any]:
    clipped = {key: _clip(spans, dropped, newest) for key, spans in spans_by_key.items()}
    return {key: spans for key, spans in clipped.items() if spans}


def without_newest(docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The documents as the builder would have written them without their newest release."""
    main = json.loads(json.dumps(docs[""]))
    dropped = main["versions"].pop()
    newest = main["versions"][-1]
    for cls, methods in main["classes"].items():
        kept = {}
        for name, entry in methods.items():
            entry = {key: _clip(spans, dropped, newest) for key, spans in entry.items()}
            if entry["defs"]:
                kept[name] = entry
        main["classes"][cls] = kept
    main["events"] = _clip_map(main["events"], dropped, newest)
    main["control_flags"] = _clip(main["control_flags"], dropped, newest)
    out = {"": main}
    fingerprints = json.loads(json.dumps(docs["fingerprints"]))
    gone = len(fingerprints["versions"]) - 1
    fingerprints["versions"].pop()
    for method in fingerprints["methods"]:
        method[2] = [[a, newest if b == dropped else b] for a, b in method[2] if a != dropped]
    statements = {}
    for fp, flat in fingerprints["statements"].items():
        kept_flat: list[int] = []
        for i in range(0, len(flat), 3):
            m, a, b = flat[i : i + 3]
            if a != gone:
                kept_flat += [m, a, gone - 1 if b == gone else b]
        if kept_flat:
            statements[fp] = kept_flat
    fingerprints["statements"] = statements
    out["fingerprints"] = fingerprints
    modules = json.loads(json.dumps(docs["modules"]))
    modules["versions"].pop()
    exports = {m: _clip_map(names, dropped, newest) for m, names in modules["exports"].items()}
    modules["exports"] = {m: names for m, names in exports.items() if names}
    modules["classes"] = _clip_map(modules["classes"], dropped, newest)
    out["modules"] = modules
    arguments = json.loads(json.dumps(docs["arguments"]))
    arguments["versions"].pop()
    arguments["fields"] = _clip_map(arguments["fields"], dropped, newest)
    renames = []
    for entry in arguments["renames"]:
        entry["shim"] = [[a, newest if b == dropped else b] for a, b in entry["shim"] if a != dropped]
        if entry["shim"]:
            renames.append(entry)
    arguments["renames"] = renames
    out["arguments"] = arguments
    return out


def lagging_package(into: Path, library: str = "transformers") -> Path:
    """Copy ``src/trainwright`` under ``into`` with ``library``'s catalogue one release behind; returns the
    folder to put on ``PYTHONPATH`` (before the plugin)."""
    target = into / "trainwright"
    shutil.copytree(SRC, target, ignore=shutil.ignore_patterns("__pycache__"))
    docs = without_newest(read(library))
    data = target / "catalog" / "data"
    for fact, doc in docs.items():
        name = f"{library}.json" if not fact else f"{library}-{fact}.json"
        (data / name).write_text(
            json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8"
        )
    return into
