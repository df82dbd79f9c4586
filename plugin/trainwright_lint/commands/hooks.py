"""``trainwright hooks``: the Trainer methods (or callback events) of one transformers release, as a table.

Why this command: before overriding a Trainer method you want to know, for the release you actually run,
whether the method is public, since when it exists, what its signature is there, whether the Trainer still
calls it, and what to use instead. All of it comes from the catalogue (``trainwright.catalog``), so the
command never imports transformers. What it describes is what ``trainwright lint`` checks: the
project's declared range (or ``--transformers-version``), resolved by the same code and named with its
source; a table is drawn at the range's newest release and marks what not every release of the range has.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwright.catalog import Catalog, Guidance, MethodInfo, VersionView, load_catalog
from trainwright.catalog.versions import version_key
from trainwright_lint.configuration import Target, project_targets
from trainwright_lint.terminal import ENVIRONMENT_HELP, Cell, Column, Terminal, printable, render_table

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
        help="transformers release or range to describe (default: what `trainwright lint` checks: "
        "[tool.trainwright], else the project's requirement, else the installed release, else the newest "
        "catalogued). A release the catalogue lacks is described as the nearest one at or below it, "
        "with a warning; one outside the catalogue is an error.",
    )


@dataclass(frozen=True)
class Described:
    """The releases a description is for: the project's target, resolved as ``trainwright lint``
    resolves it (``configuration``), and the one release a table is drawn at (the newest)."""

    target: Target

    @property
    def version(self) -> str:
        return self.target.newest

    @property
    def releases(self) -> tuple[str, ...]:
        return self.target.releases

    @property
    def note(self) -> str:
        """``transformers 5.24.0 (installed)``, or for a range ``transformers 4.45.2, the newest
        release of >=4.44,<4.46 (pyproject.toml) → 4.44.0–4.45.2``: a noun phrase after "in"."""
        if len(self.releases) == 1:
            return self.target.describe()
        shown = self.target.describe().removeprefix(f"{self.target.library} ")
        return f"{self.target.library} {self.version}, the newest release of {shown}"

    def as_json(self) -> dict[str, Any]:
        return {
            "specifier": self.target.specifier,
            "source": self.target.source,
            "releases": list(self.releases),
            "warnings": list(self.target.warnings),
        }


def resolve_or_report(explicit: str | None, command: str) -> Described | None:
    """The target of the project in the working directory (``--transformers-version`` first), with
    its warnings printed; ``None`` after printing why it is unusable (exit status 2)."""
    try:
        target = project_targets(Path.cwd(), transformers_option=explicit).transformers
    except ValueError as exc:  # TargetError, ConfigError
        print(printable(f"trainwright {command}: error: {exc}", sys.stderr), file=sys.stderr)
        return None
    for warning in target.warnings:
        print(printable(f"trainwright {command}: warning: {warning}", sys.stderr), file=sys.stderr)
    return Described(target)


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


def method_rows(
    catalog: Catalog, view: VersionView, cls: str, include_private: bool, releases: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """The methods at ``view``'s release; ``in_whole_range`` says whether every release of ``releases``
    (the target range) has it too."""
    rows = []
    for name, info in view.methods(cls).items():
        if info.private and not include_private:
            continue
        history = catalog.method_history(name, cls)
        assert history is not None
        row = _method_row(catalog, view, cls, info, history.first, len(history.signatures) > 1)
        row["in_whole_range"] = all(catalog.at(r).method(name, cls) is not None for r in releases)
        rows.append(row)
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


def event_rows(
    view: VersionView, catalog: Catalog | None = None, releases: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """The events at ``view``'s release; ``in_whole_range``: whether every release of ``releases`` has it."""
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
            "in_whole_range": catalog is None or all(e.name in catalog.at(r).events for r in releases),
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
    releases: tuple[str, ...] = (),
) -> str:
    term = term or Terminal()
    partial = any(not r.get("in_whole_range", True) for r in rows)
    table_rows = [_table_row(catalog, view, cls, r, term) for r in rows]
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
        *(
            term.wrap(f"+  not in every release of the target range ({_span(releases)})", hang=3)
            if partial
            else []
        ),
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


def _table_row(
    catalog: Catalog, view: VersionView, cls: str, r: dict[str, Any], term: Terminal
) -> list[Cell]:
    """One method's row of the ``methods`` table: name and marks, visibility, since, signature and advice."""
    marks = "".join(
        mark
        for mark, on in (
            ("!", r["stopped_being_called"]),
            ("~", r["signature_changed"]),
            ("+", not r["in_whole_range"]),
        )
        if on
    )
    detail: list[str] = [r["signature"]]
    if r["stopped_being_called"]:
        detail.append(
            f"{term.arrow} NOT CALLED by {cls} at {view.version}, so an override is ignored"
            + (f"; {r['alternative']}" if r["alternative"] else "")
        )
    elif r["alternative"]:
        detail.append(f"{term.arrow} {r['alternative']}")
    return [
        r["name"] + (" " + marks if marks else ""),
        "priv" if r["visibility"] == "private" else "pub",
        since_text(catalog, r["since"]),
        detail,
    ]


def _bold(term: Terminal, lines: list[str]) -> list[str]:
    return [term.style(line, "heading") for line in lines]


def _bold_header(term: Terminal, table: list[str]) -> list[str]:
    """The table with its header (every line above its first rule of dashes) in bold."""
    rule = next(i for i, line in enumerate(table) if line.startswith("-"))
    return [*_bold(term, table[:rule]), *table[rule:]]


def events_text(
    view: VersionView,
    rows: list[dict[str, Any]],
    note: str,
    term: Terminal | None = None,
    releases: tuple[str, ...] = (),
) -> str:
    term = term or Terminal()
    standard = _standard_kwargs(view)
    partial = [r["name"] for r in rows if not r.get("in_whole_range", True)]
    columns = (
        Column("ORDER", "fixed"),
        Column("EVENT", "fixed"),
        Column("SINCE", "fixed"),
        Column("EXTRA KWARGS", "wrap"),
        Column("FIRES", "wrap", min_width=30),
    )
    table_rows: list[list[Cell]] = [
        [
            str(r["order"]),
            r["name"] + ("" if r.get("in_whole_range", True) else " +"),
            r["since"],
            ", ".join(r["extra_kwargs"]) or "-",
            r["fires"],
        ]
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
            *(
                term.wrap(
                    f"+  not an event on every release of the target range ({_span(releases)}): "
                    + ", ".join(partial),
                    hang=3,
                )
                if partial
                else []
            ),
        ]
    )


def _span(releases: tuple[str, ...]) -> str:
    return releases[0] if len(releases) == 1 else f"{releases[0]}–{releases[-1]}"


# ------------------------------------------------------------------------------------------- command


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    described = resolve_or_report(args.transformers_version, "hooks")
    if described is None:
        return 2
    version, note, releases = described.version, described.note, described.releases
    view = catalog.at(version)
    if args.events:
        rows = event_rows(view, catalog, releases)
        if args.format == "json":
            emit(
                json.dumps(
                    {
                        "library": catalog.library,
                        "version": version,
                        "target": described.as_json(),
                        "events": rows,
                        "control_flags": list(view.control_flags),
                    },
                    indent=2,
                )
            )
        else:
            emit(events_text(view, rows, note, Terminal.detect(), releases))
        return 0
    rows = method_rows(catalog, view, args.cls, args.private, releases)
    if args.format == "json":
        payload = {
            "library": catalog.library,
            "version": version,
            "target": described.as_json(),
            "class": args.cls,
            "methods": rows,
        }
        emit(json.dumps(payload, indent=2))
    else:
        emit(methods_text(catalog, view, args.cls, rows, note, args.private, Terminal.detect(), releases))
    return 0
