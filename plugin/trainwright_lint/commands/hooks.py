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
from typing import Any

from trainwright.catalog import Catalog, Guidance, MethodInfo, VersionView, installed_version, load_catalog
from trainwright.catalog.versions import version_key
from trainwright_lint.terminal import ENVIRONMENT_HELP, Cell, Column, Terminal, render_table

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
    """``(covered release, what it is and why it was chosen)``; raises ``ValueError`` for a bad version.

    The note is a noun phrase that reads after "in" or "Target:": ``transformers 5.24.0 (installed)``,
    ``transformers 5.24.0 (not installed; newest catalogued release)``.
    """
    if explicit is not None:
        source, requested = "--transformers-version", explicit
    else:
        requested = installed_version("transformers")
        source = "installed"
        if requested is None:
            return catalog.newest, f"transformers {catalog.newest} (not installed; newest catalogued release)"
    resolved = catalog.resolve_version(requested)
    if version_key(resolved) == version_key(requested):
        return resolved, f"transformers {resolved} ({source})"
    if _older(requested, resolved):
        return resolved, (
            f"transformers {resolved} (oldest catalogued release; {source} {requested} is older than the "
            f"catalogue, {catalog.oldest}..{catalog.newest})"
        )
    return resolved, (
        f"transformers {resolved} (nearest catalogued release below {source} {requested}, which is not "
        "catalogued)"
    )


def _older(a: str, b: str) -> bool:
    return version_key(a) < version_key(b)


def emit(text: str) -> None:
    """Print one report (a closed pipe, ``trainwright hooks | head``, is the console's business:
    ``cli.reader_went_away``)."""
    print(text)


def since_text(catalog: Catalog, first: str) -> str:
    """``first`` as shown to users: the oldest covered release means "at least as old as" it."""
    if first == catalog.oldest:
        return "<=" + ".".join(first.split(".")[:2])
    return first


def short_alternative(catalog: Catalog, name: str) -> str:
    """The advice cell: the guidance verdict spelt out with its alternatives, else the hand-written
    alternative after "instead:", else ``""``.

    Spelt out because a bare ``avoid: create_optimizer, ...`` reads as "avoid create_optimizer" when it
    means "do not override this; override create_optimizer instead".
    """
    guidance = catalog.guidance(name)
    if guidance is not None:
        return verdict_text(guidance, catalog.alternative(name))
    alternative = catalog.alternative(name)
    return f"instead: {alternative}" if alternative else ""


# Guidance.verdict -> the instruction, and the kind of alternative it names first, unlabelled
# ("set an argument instead: optimizers, optim").
VERDICTS: dict[str, tuple[str, str | None]] = {
    "override": ("override is fine, keep this signature", None),
    "callback": ("use a TrainerCallback instead", "events"),
    "argument": ("set an argument instead", "arguments"),
    "avoid": ("do not override", None),
}
# Each other kind of alternative as what the user does with it.
ALTERNATIVE_VERBS: dict[str, str] = {
    "events": "use callback events",
    "public_methods": "override",
    "arguments": "set arguments",
}
PER_KIND = 3  # alternatives shown per kind; `trainwright explain NAME` lists them all


def verdict_text(g: Guidance, fallback: str | None = None) -> str:
    """The verdict as an instruction whose every alternative says what to do with it::

        verdict: do not override; instead override create_optimizer, create_scheduler; or set arguments optimizers
        verdict: use a TrainerCallback instead: on_save; or override save_model; or set arguments save_steps

    A bare "avoid: create_optimizer, ..." read as "avoid create_optimizer", the opposite of the advice.
    """
    head, own = VERDICTS[g.verdict]
    kinds = {"events": g.events, "public_methods": g.public_methods, "arguments": g.arguments}
    shown = {kind: ", ".join(items[:PER_KIND]) for kind, items in kinds.items() if items}
    first = shown.pop(own) if own in shown else None
    others = [f"{ALTERNATIVE_VERBS[kind]} {items}" for kind, items in shown.items()]
    if first is not None:
        return "; or ".join([f"verdict: {head}: {first}", *others])
    if others:
        joint = "; or " if g.verdict == "override" else "; instead "
        return f"verdict: {head}{joint}" + "; or ".join(others)
    if fallback and g.verdict != "override":
        return f"verdict: {head}; instead: {fallback}"
    return f"verdict: {head}"


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

# What hooks paints once the text is laid out (terminal.Terminal.paint).
PAINT: tuple[tuple[str, str], ...] = (
    (r"NOT CALLED", "warning"),
    (r"(?<=→ )(?:verdict|instead):|(?<=-> )(?:verdict|instead):", "advice"),  # right after the arrow
)


def methods_text(
    catalog: Catalog,
    view: VersionView,
    cls: str,
    rows: list[dict[str, Any]],
    note: str,
    include_private: bool,
    term: Terminal | None = None,
) -> str:
    term = term or Terminal()
    table_rows: list[list[Cell]] = []
    for r in rows:
        marks = ("!" if r["stopped_being_called"] else "") + ("~" if r["signature_changed"] else "")
        detail: list[str] = [r["signature"]]
        if r["stopped_being_called"]:
            detail.append(
                f"{term.arrow} NOT CALLED by {cls} at {view.version}, so an override is ignored"
                + (f"; {r['alternative']}" if r["alternative"] else "")
            )
        elif r["alternative"]:
            detail.append(f"{term.arrow} {r['alternative']}")
        table_rows.append(
            [
                r["name"] + (" " + marks if marks else ""),
                "priv" if r["visibility"] == "private" else "pub",
                since_text(catalog, r["since"]),
                detail,
            ]
        )
    all_methods = view.methods(cls)
    hidden = [n for n, m in all_methods.items() if m.private] if not include_private else []
    hidden_hot = [n for n in hidden if catalog.guidance(n) is not None]
    columns = (
        Column("METHOD", "spill"),
        Column("VIS", "fixed"),
        Column("SINCE", "fixed"),
        Column(f"SIGNATURE AT {view.version} / {term.arrow} ADVICE", "wrap", min_width=30),
    )
    title = term.wrap(f"{cls} methods in {note}: {len(all_methods)} methods, {len(rows)} shown")
    out = [
        *_bold(term, title),
        "",
        *_bold_header(term, render_table(term, columns, table_rows)),
        "",
        *term.wrap("~  the signature differs in other catalogued releases", hang=3),
        *term.wrap("!  called by the Trainer in earlier releases, not in this one", hang=3),
        *term.wrap(
            f"{term.arrow}  advice from the catalogue: whether to override it, and what to use instead",
            hang=3,
        ),
        *term.wrap("Details for one name: trainwright explain NAME"),
    ]
    if hidden:
        out += term.wrap(
            f"{len(hidden)} private methods hidden (--private shows them); commonly overridden among them: "
            + ", ".join(hidden_hot)
            + "."
        )
    return term.paint("\n".join(out), PAINT)


def _bold(term: Terminal, lines: list[str]) -> list[str]:
    return [term.style(line, "heading") for line in lines]


def _bold_header(term: Terminal, table: list[str]) -> list[str]:
    """The table with its header (every line above its first rule of dashes) in bold."""
    rule = next(i for i, line in enumerate(table) if line.startswith("-"))
    return [*_bold(term, table[:rule]), *table[rule:]]


def events_text(
    view: VersionView, rows: list[dict[str, Any]], note: str, term: Terminal | None = None
) -> str:
    term = term or Terminal()
    standard = _standard_kwargs(view)
    columns = (
        Column("ORDER", "fixed"),
        Column("EVENT", "fixed"),
        Column("SINCE", "fixed"),
        Column("EXTRA KWARGS", "wrap"),
        Column("FIRES", "wrap", min_width=30),
    )
    table_rows: list[list[Cell]] = [
        [str(r["order"]), r["name"], r["since"], ", ".join(r["extra_kwargs"]) or "-", r["fires"]]
        for r in rows
    ]
    return "\n".join(
        [
            *_bold(term, term.wrap(f"TrainerCallback events in {note}, in firing order within train():")),
            "",
            *_bold_header(term, render_table(term, columns, table_rows)),
            "",
            *term.wrap(
                "Every event is called as on_x(args, state, control, **kwargs) and always receives the "
                f"keyword arguments {', '.join(standard)}; your method must accept **kwargs."
            ),
            *term.wrap(f"TrainerControl flags: {', '.join(view.control_flags)}", hang=2),
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
        epilog=ENVIRONMENT_HELP,
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
            emit(events_text(view, rows, note, Terminal.detect()))
        return 0
    rows = method_rows(catalog, view, args.cls, args.private)
    if args.format == "json":
        emit(
            json.dumps(
                {"library": catalog.library, "version": version, "class": args.cls, "methods": rows}, indent=2
            )
        )
    else:
        emit(methods_text(catalog, view, args.cls, rows, note, args.private, Terminal.detect()))
    return 0
