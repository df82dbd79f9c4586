"""``trainwright explain METHOD``: which callback events fire around the method, path by path.

Read from the event table (``trainwright.catalog.events``): the call paths from the public entry points
to the method at the target release, the events the nearest firing caller fires before and after it,
and, per event, the paths on which it never fires. That is what decides whether code can move out of
an override into a callback (issue 33): ``on_save`` never fires around a user's ``save_model()``.
"""

from __future__ import annotations

from typing import Any

from trainwright.catalog.events import load_events
from trainwright_lint.terminal import Terminal


def events_report(name: str, version: str) -> dict[str, Any] | None:
    """The paths to ``name`` at ``version`` with the events around each, or ``None`` when the table
    does not know the method (a TRL or project method)."""
    table = load_events().at(version)
    if not table.knows(name):
        return None
    inside = list(table.inside(name))
    paths: list[dict[str, Any]] = []
    for path in table.paths(name):
        around = [h for h in reversed(path.hops) if h.before or h.after][:LEVELS]
        paths.append({
            "path": path.text(name),
            "entry": path.entry,
            "opt_in": "." in path.entry,
            "callers": [{"caller": h.caller, "before": list(h.before), "after": list(h.after)} for h in around],
            "around": sorted({e for h in around for e in (*h.before, *h.after)} | set(inside)),
        })  # fmt: skip
    seen = sorted({e for p in paths for e in p["around"]})
    missing: dict[str, list[str]] = {}
    for event in seen:
        gaps = tuple(p["path"] for p in paths if event not in p["around"])
        if gaps:
            missing.setdefault(" | ".join(gaps), []).append(event)
    return {
        "release": table.version,
        "fires_itself": inside,
        "fires_sometimes": list(table.maybe(name)),
        "paths": paths,
        "every_path": [e for e in seen if all(e in p["around"] for p in paths)],
        "not_every_path": [
            {"events": events, "missing_on": key.split(" | ")} for key, events in missing.items()
        ],
    }


# How many event-firing callers up each path the report shows (``save_model`` <- ``_save_checkpoint``
# <- ``_maybe_log_save_evaluate``, which fires ``on_save`` after it).
LEVELS = 2


def events_lines(term: Terminal, r: dict[str, Any] | None) -> list[str]:
    if r is None:
        return []
    lines = ["", *term.wrap(f"Callback events around it (transformers {r['release']}), per call path:")]
    for p in r["paths"]:
        near = []
        for c in p["callers"]:
            parts = [f"before {', '.join(c['before'])}"] if c["before"] else []
            parts += [f"after {', '.join(c['after'])}"] if c["after"] else []
            near.append(f"{c['caller']} fires {' and '.join(parts)}")
        where = "; ".join(near) if near else "NO event fires around it"
        opt = " (opt-in integration)" if p["opt_in"] else ""
        lines += term.wrap(f"{p['path']}{opt}: {where}", indent="  ", hang=4)
    if r["fires_itself"]:
        lines += term.wrap(f"fires itself on every run: {', '.join(r['fires_itself'])}", indent="  ")
    if r["fires_sometimes"]:
        lines += term.wrap(
            f"fires itself only under a condition: {', '.join(r['fires_sometimes'])}", indent="  "
        )
    every = ", ".join(r["every_path"]) or "none"
    lines += term.wrap(f"fires on every path: {every}", indent="  ")
    for gap in r["not_every_path"]:
        missing = gap["missing_on"]
        shown = "; ".join(missing[:3]) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
        lines += term.wrap(
            f"{', '.join(gap['events'])}: do NOT fire around it on {shown}", indent="  ", hang=4
        )
    return lines
