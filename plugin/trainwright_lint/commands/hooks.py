"""``trainwright hooks``: the Trainer methods (or callback events) of one transformers release, as a table.

Why this command: before overriding a Trainer method you want to know, for the release you actually run,
whether the method is public, since when it exists, what its signature is there, whether the Trainer still
calls it, and what to use instead. All of it comes from the catalogue (``trainwright.catalog``), so the
command never imports transformers; the target release defaults to the installed one (package metadata).
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from trainwright.catalog import Catalog, Guidance, MethodInfo, VersionView, installed_version, load_catalog
from trainwright.catalog.versions import version_key

WIDTH = 120
CLASSES = ("Trainer", "Seq2SeqTrainer")


# ----------------------------------------------------------------------------------- shared with explain


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """``--transformers-version`` and ``--format``, shared by ``hooks`` and ``explain``."""
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "--transformers-version",
        metavar="X",
        help="transformers release to describe (default: the installed one, read from package metadata "
        "without importing it; else the newest in the catalogue). Uncovered releases resolve to the nearest "
        "covered release at or below X.",
    )


def resolve_or_report(catalog: Catalog, explicit: str | None, command: str) -> tuple[str, str] | None:
    """:func:`resolve_target`, or ``None`` after printing why the version is unusable (exit status 2)."""
    try:
        return resolve_target(catalog, explicit)
    except ValueError as exc:
        print(f"trainwright {command}: {exc}", file=sys.stderr)
        return None


def resolve_target(catalog: Catalog, explicit: str | None) -> tuple[str, str]:
    """``(covered release, one-line note on how it was chosen)``; raises ``ValueError`` for a bad version."""
    if explicit is not None:
        source, requested = "--transformers-version", explicit
    else:
        requested = installed_version("transformers")
        source = "installed transformers"
        if requested is None:
            return (
                catalog.newest,
                f"transformers is not installed; using the newest catalogued release {catalog.newest}",
            )
    resolved = catalog.resolve_version(requested)
    if version_key(resolved) == version_key(requested):
        return resolved, f"transformers {resolved} ({source})"
    if _older(requested, resolved):
        return resolved, (
            f"{source} {requested} is older than the catalogue ({catalog.oldest}..{catalog.newest}); "
            f"using {resolved}"
        )
    return resolved, f"{source} {requested} is not catalogued; using the nearest covered release {resolved}"


def _older(a: str, b: str) -> bool:
    return version_key(a) < version_key(b)


def emit(text: str) -> None:
    """Print, tolerating a closed pipe (``trainwright hooks | head``)."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def since_text(catalog: Catalog, first: str) -> str:
    """``first`` as shown to users: the oldest covered release means "at least as old as" it."""
    if first == catalog.oldest:
        return "<=" + ".".join(first.split(".")[:2])
    return first


def short_alternative(catalog: Catalog, name: str) -> str:
    """The "use instead" cell: the guidance verdict with its targets, else the hand-written alternative."""
    guidance = catalog.guidance(name)
    if guidance is not None:
        return _guidance_cell(guidance, catalog.alternative(name))
    return catalog.alternative(name) or ""


def _guidance_cell(g: Guidance, fallback: str | None) -> str:
    if g.verdict == "override":
        extra = g.arguments[:3] or g.events[:3]
        return "override OK (keep the signature)" + (f"; or {', '.join(extra)}" if extra else "")
    targets = {
        "callback": g.events + g.arguments,
        "argument": g.arguments + g.public_methods,
        "avoid": g.public_methods + g.events + g.arguments,
    }[g.verdict]
    if targets:
        return f"{g.verdict}: {', '.join(targets[:4])}"
    return f"{g.verdict}: {fallback}" if fallback else g.verdict


# ------------------------------------------------------------------------------------------------ rows


def method_rows(catalog: Catalog, view: VersionView, cls: str, include_private: bool) -> list[dict[str, Any]]:
    rows = []
    for name, info in view.methods(cls).items():
        if info.private and not include_private:
            continue
        history = catalog.method_history(name, cls)
        assert history is not None
        rows.append(_method_row(catalog, view, cls, info, history.first, len(history.signatures) > 1))
    return rows


def _method_row(
    catalog: Catalog, view: VersionView, cls: str, info: MethodInfo, first: str, changed: bool
) -> dict[str, Any]:
    target = version_key(view.version)
    was_called_before = any(version_key(v) < target for v in catalog.called_versions(info.name, cls=cls))
    guidance = catalog.guidance(info.name)
    return {
        "name": info.name,
        "owner": info.owner,
        "kind": info.kind,
        "visibility": "private" if info.private else "public",
        "since": first,
        "signature": info.signature.text,
        "signature_changed": changed,
        "called": info.called,
        "stopped_being_called": (not info.called) and was_called_before,
        "call_sites": [site.describe() for site in info.call_sites],
        "verdict": guidance.verdict if guidance is not None else None,
        "alternative": short_alternative(catalog, info.name),
    }


def event_rows(view: VersionView) -> list[dict[str, Any]]:
    standard = _standard_kwargs(view)
    return [
        {
            "order": e.order,
            "name": e.name,
            "since": e.since,
            "until": e.until,
            "kwargs": list(e.kwargs),
            "extra_kwargs": [k for k in e.kwargs if k not in standard],
            "fires": e.fires,
        }
        for e in view.events.values()
    ]


def _standard_kwargs(view: VersionView) -> tuple[str, ...]:
    """The kwargs every event receives at this release (``CallbackHandler.call_event``'s defaults)."""
    sets = [set(e.kwargs) for e in view.events.values()]
    common = set.intersection(*sets) if sets else set()
    first = next(iter(view.events.values()), None)
    return tuple(k for k in (first.kwargs if first else ()) if k in common)


# ---------------------------------------------------------------------------------------------- tables


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str | list[str]]], widths: Sequence[int]
) -> str:
    """Plain-text table with wrapped cells. A cell given as a list holds several paragraphs (one per line)."""
    lines = []

    def wrap(cell: str | list[str], width: int) -> list[str]:
        paragraphs = [cell] if isinstance(cell, str) else cell
        out: list[str] = []
        for para in paragraphs:
            out += textwrap.wrap(
                para, width, break_on_hyphens=False, subsequent_indent="  " if out else ""
            ) or [""]
        return out or [""]

    def emit_row(cells: Sequence[str | list[str]]) -> None:
        wrapped = [wrap(c, w) for c, w in zip(cells, widths)]
        for i in range(max(len(w) for w in wrapped)):
            parts = [(w[i] if i < len(w) else "").ljust(width) for w, width in zip(wrapped, widths)]
            lines.append("  ".join(parts).rstrip())

    emit_row(headers)
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        emit_row(row)
    return "\n".join(lines)


def _fit(first_widths: Sequence[int]) -> list[int]:
    used = sum(first_widths) + 2 * len(first_widths)
    return [*first_widths, WIDTH - used]


def methods_text(
    catalog: Catalog,
    view: VersionView,
    cls: str,
    rows: list[dict[str, Any]],
    note: str,
    include_private: bool,
) -> str:
    name_w = max([len("METHOD")] + [len(r["name"]) + 3 for r in rows])
    widths = _fit([name_w, 4, 7])
    table_rows: list[list[str | list[str]]] = []
    for r in rows:
        marks = ("!" if r["stopped_being_called"] else "") + ("~" if r["signature_changed"] else "")
        last: list[str] = [r["signature"]]
        if r["stopped_being_called"]:
            last.append(
                f"-> NOT CALLED by {cls} at {view.version}; " + (r["alternative"] or "override is ignored")
            )
        elif r["alternative"]:
            last.append("-> " + r["alternative"])
        table_rows.append(
            [
                r["name"] + (" " + marks if marks else ""),
                "priv" if r["visibility"] == "private" else "pub",
                since_text(catalog, r["since"]),
                last,
            ]
        )
    all_methods = view.methods(cls)
    hidden = [n for n, m in all_methods.items() if m.private] if not include_private else []
    hidden_hot = [n for n in hidden if catalog.guidance(n) is not None]
    out = [
        f"{cls} methods at {note}: {len(all_methods)} methods, {len(rows)} shown",
        "",
        render_table(
            ["METHOD", "VIS", "SINCE", f"SIGNATURE AT {view.version} / -> USE INSTEAD OR SAFE FORM"],
            table_rows,
            widths,
        ),
        "",
        "~ signature differs in other catalogued releases   ! called by the Trainer in earlier releases, no longer",
        "Details for one name: trainwright explain NAME",
    ]
    if hidden:
        out.append(
            textwrap.fill(
                f"{len(hidden)} private methods hidden (--private shows them); commonly overridden among them: "
                + ", ".join(hidden_hot)
                + ".",
                WIDTH,
            )
        )
    return "\n".join(out)


def events_text(view: VersionView, rows: list[dict[str, Any]], note: str) -> str:
    standard = _standard_kwargs(view)
    widths = _fit([5, 22, 8, 20])
    table_rows = [
        [str(r["order"]), r["name"], r["since"], ", ".join(r["extra_kwargs"]) or "-", r["fires"]]
        for r in rows
    ]
    return "\n".join(
        [
            f"TrainerCallback events at {note}, in firing order within train():",
            "",
            render_table(["ORDER", "EVENT", "SINCE", "EXTRA KWARGS", "FIRES"], table_rows, widths),
            "",
            textwrap.fill(
                "Every event is called as on_x(args, state, control, **kwargs) and always receives the keyword "
                f"arguments {', '.join(standard)}; your method must accept **kwargs.",
                WIDTH,
            ),
            f"TrainerControl flags: {', '.join(view.control_flags)}",
        ]
    )


# ------------------------------------------------------------------------------------------- command


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "hooks",
        help="table of Trainer methods (or callback events) for a transformers release",
        description=(
            "List the Trainer methods of one transformers release: visibility, first release, signature at that "
            "release and the recommended alternative. By default only public methods are listed, and a footer "
            "names the hidden private methods that people commonly override; --private lists them all. "
            "--events lists the TrainerCallback events instead."
        ),
    )
    add_common_arguments(parser)
    parser.add_argument("--private", action="store_true", help="include private (_-prefixed) methods")
    parser.add_argument(
        "--events", action="store_true", help="list the TrainerCallback events and TrainerControl flags"
    )
    parser.add_argument(
        "--class", dest="cls", choices=CLASSES, default="Trainer", help="class to list (default: Trainer)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    target = resolve_or_report(catalog, args.transformers_version, "hooks")
    if target is None:
        return 2
    version, note = target
    view = catalog.at(version)
    if args.events:
        rows = event_rows(view)
        if args.format == "json":
            emit(
                json.dumps(
                    {
                        "library": catalog.library,
                        "version": version,
                        "events": rows,
                        "control_flags": list(view.control_flags),
                    },
                    indent=2,
                )
            )
        else:
            emit(events_text(view, rows, note))
        return 0
    rows = method_rows(catalog, view, args.cls, args.private)
    if args.format == "json":
        emit(
            json.dumps(
                {"library": catalog.library, "version": version, "class": args.cls, "methods": rows}, indent=2
            )
        )
    else:
        emit(methods_text(catalog, view, args.cls, rows, note, args.private))
    return 0
