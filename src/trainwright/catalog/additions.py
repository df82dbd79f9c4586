"""Append one release, newer than every covered one, to the merged catalogue documents, and read one
release back out of them.

Why append rather than rebuild: the shipped documents store ``[first, last, value]`` release ranges
(``scripts/build_catalog.py`` merges every release's record with ``ranges``). A release newer than all of
them either continues the range that ends at the previous newest release (same value) or opens a new one,
so appending gives exactly what the builder would have written had it been given that release too, at the
cost of one pass over the new record. The records come from :mod:`trainwright.catalog.extract` (see
:mod:`trainwright.catalog.usercache`), in their JSON form (:func:`record_json`).

:func:`release_at` and :func:`facts_at` are the inverse (one release's record out of the merged documents):
the tests compare them with a fresh extraction of the installed release.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Document = dict[str, Any]


def record_json(record: dict[str, Any]) -> dict[str, Any]:
    """The extractor's record with tuple keys and sets made JSON-able (``fingerprints`` as a list)."""
    facts = record["facts"]
    fingerprints = [
        [cls, method, sorted(set(fps))] for (cls, method), fps in sorted(facts["fingerprints"].items())
    ]
    arguments = facts["arguments"]
    return {
        "release": record["release"],
        "facts": {
            "fingerprints": fingerprints,
            "modules": facts["modules"],
            "arguments": {"fields": arguments["fields"], "renames": [list(r) for r in arguments["renames"]]},
        },
    }


def _extend(spans: list[list[Any]], previous: str, version: str, tail: list[Any]) -> None:
    """Continue the span ending at ``previous`` when it holds the same value, else open one at ``version``."""
    if spans and spans[-1][1] == previous and spans[-1][2:] == tail:
        spans[-1][1] = version
    else:
        spans.append([version, version, *tail])


def append_release(doc: Document, version: str, release: dict[str, Any]) -> None:
    """Append ``release`` (``{"classes", "events", "control_flags"}``) to a ``<library>.json`` document."""
    previous = doc["versions"][-1]
    doc["versions"] = [*doc["versions"], version]
    for cls, methods in release["classes"].items():
        entries = doc["classes"].setdefault(cls, {})
        for name, info in methods.items():
            entry = entries.setdefault(name, {"defs": [], "calls": [], "called": []})
            _extend(entry["defs"], previous, version, [info["owner"], info["kind"], info["params"]])
            if info["calls"]:
                _extend(entry["calls"], previous, version, [info["calls"]])
            if info["called"]:
                _extend(entry["called"], previous, version, [])
    for event, kwargs in release["events"].items():
        _extend(doc["events"].setdefault(event, []), previous, version, [kwargs])
    if release["control_flags"] is not None:
        _extend(doc["control_flags"], previous, version, [release["control_flags"]])


def append_fingerprints(doc: Document, version: str, fingerprints: list[list[Any]]) -> None:
    """Append ``[[class, method, [fingerprint, ...]], ...]`` to a ``<library>-fingerprints.json`` document.

    Methods new in this release are added at the end of ``methods`` (their index is what ``statements``
    refers to); ``statements`` triples ``[method, first, last]`` use indices into ``versions``.
    """
    previous_index = len(doc["versions"]) - 1
    new_index = previous_index + 1
    doc["versions"] = [*doc["versions"], version]
    method_index = {(cls, name): i for i, (cls, name, _) in enumerate(doc["methods"])}
    for cls, name, fps in fingerprints:
        m = method_index.get((cls, name))
        if m is None:
            doc["methods"].append([cls, name, []])
            m = method_index[(cls, name)] = len(doc["methods"]) - 1
        present = doc["methods"][m][2]
        if present and present[-1][1] == doc["versions"][previous_index]:
            present[-1][1] = version
        else:
            present.append([version, version])
        for fp in fps:
            flat = doc["statements"].setdefault(fp, [])
            for i in range(0, len(flat), 3):
                if flat[i] == m and flat[i + 2] == previous_index:
                    flat[i + 2] = new_index
                    break
            else:
                flat.extend([m, new_index, new_index])


def append_modules(doc: Document, version: str, modules: dict[str, Any]) -> None:
    """Append ``{"exports": {module: {name: canonical}}, "classes": {canonical: [bases]}}``."""
    previous = doc["versions"][-1]
    doc["versions"] = [*doc["versions"], version]
    for module, names in modules["exports"].items():
        recorded = doc["exports"].setdefault(module, {})
        for name, canonical in names.items():
            _extend(recorded.setdefault(name, []), previous, version, [canonical])
    for cls, bases in modules["classes"].items():
        _extend(doc["classes"].setdefault(cls, []), previous, version, [bases])


def append_arguments(doc: Document, version: str, arguments: dict[str, Any]) -> None:
    """Append ``{"fields": {cls: [[name, default, factory, init], ...]}, "renames": [[cls, old, new,
    exact, note], ...]}``; a rename keeps the evidence of the first release that shows it exactly."""
    previous = doc["versions"][-1]
    doc["versions"] = [*doc["versions"], version]
    for cls, fields in arguments["fields"].items():
        _extend(doc["fields"].setdefault(cls, []), previous, version, [fields])
    entries = {(e["cls"], e["old"], e["new"]): e for e in doc["renames"]}
    for cls, old, new, exact, note in arguments["renames"]:
        entry = entries.get((cls, old, new))
        if entry is None:
            entry = entries[(cls, old, new)] = {
                "cls": cls,
                "old": old,
                "new": new,
                "exact": False,
                "shim": [],
            }
            entry["evidence"] = [version, note]
            doc["renames"].append(entry)
        if exact and not entry["exact"]:
            entry["exact"] = True
            entry["evidence"] = [version, note]
        shim = entry["shim"]
        if shim and shim[-1][1] == previous:
            shim[-1][1] = version
        elif not shim or shim[-1][1] != version:
            shim.append([version, version])


#: Each fact document's appender, by fact name (the facts of one release, shaped as that document's).
APPENDERS: dict[str, Callable[[Document, str, Any], None]] = {
    "fingerprints": append_fingerprints,
    "modules": append_modules,
    "arguments": append_arguments,
}


# ------------------------------------------------------------------------------- one release read back


def _covers(doc: Document, span: list[Any], version: str) -> bool:
    index = doc["versions"].index
    return bool(index(span[0]) <= index(version) <= index(span[1]))


def _value(doc: Document, spans: list[list[Any]], version: str) -> Any:
    return next((s[2:] for s in spans if _covers(doc, s, version)), None)


def release_at(doc: Document, version: str) -> dict[str, Any]:
    """``{"classes", "events", "control_flags"}`` of one covered release, as the extractor records it."""
    classes: dict[str, dict[str, Any]] = {}
    for cls, methods in doc["classes"].items():
        for name, entry in methods.items():
            definition = _value(doc, entry["defs"], version)
            if definition is None:
                continue
            calls = _value(doc, entry["calls"], version)
            classes.setdefault(cls, {})[name] = {
                "owner": definition[0],
                "kind": definition[1],
                "params": definition[2],
                "calls": calls[0] if calls else [],
                "called": _value(doc, entry["called"], version) is not None,
            }
    events = {e: v[0] for e, spans in doc["events"].items() if (v := _value(doc, spans, version))}
    flags = _value(doc, doc["control_flags"], version)
    return {"classes": classes, "events": events, "control_flags": flags[0] if flags else None}


def facts_at(documents: dict[str, Document], version: str) -> dict[str, Any]:
    """The fingerprints, modules and arguments of one covered release (rename notes are not kept)."""
    fp_doc = documents["fingerprints"]
    at = fp_doc["versions"].index(version)
    by_method: dict[int, set[str]] = {}
    for fp, flat in fp_doc["statements"].items():
        for i in range(0, len(flat), 3):
            if flat[i + 1] <= at <= flat[i + 2]:
                by_method.setdefault(flat[i], set()).add(fp)
    fingerprints = [
        [cls, name, sorted(by_method.get(m, ()))]
        for m, (cls, name, present) in enumerate(fp_doc["methods"])
        if any(_covers(fp_doc, span, version) for span in present)
    ]
    mod_doc = documents["modules"]
    exports = {
        module: {n: v[0] for n, spans in names.items() if (v := _value(mod_doc, spans, version))}
        for module, names in mod_doc["exports"].items()
    }
    classes = {c: v[0] for c, spans in mod_doc["classes"].items() if (v := _value(mod_doc, spans, version))}
    arg_doc = documents["arguments"]
    fields = {c: v[0] for c, spans in arg_doc["fields"].items() if (v := _value(arg_doc, spans, version))}
    renames = sorted(
        [e["cls"], e["old"], e["new"]]
        for e in arg_doc["renames"]
        if any(_covers(arg_doc, span, version) for span in e["shim"])
    )
    return {
        "fingerprints": sorted(fingerprints),
        "modules": {"exports": {m: n for m, n in exports.items() if n}, "classes": classes},
        "arguments": {"fields": fields, "renames": renames},
    }
