"""``trainwright explain NAME``: everything the catalogue knows about a Trainer method, a callback event or
a lint rule code, with subclass-or-callback advice.

Why one entry point for three kinds of names: a user reading a lint message, a traceback
(``_save_checkpoint() takes 3 positional arguments``) or a forum answer has a name, not its category.
Unknown names get "did you mean" suggestions drawn from all three vocabularies.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from trainwright.catalog import CallSite, Catalog, Guidance, load_catalog
from trainwright_lint.commands.explain_events import events_lines, events_report
from trainwright_lint.commands.hooks import (
    CLASSES,
    add_common_arguments,
    emit,
    resolve_or_report,
    since_text,
)
from trainwright_lint.rules.base import describe_release_runs
from trainwright_lint.terminal import ENVIRONMENT_HELP, GLUE, Terminal

RULE_CODE = re.compile(r"^TW\d{3}$", re.IGNORECASE)


def _rules() -> Mapping[str, Any]:
    """The linter's rule registry, if this build ships it (``trainwright_lint.rules.RULES``)."""
    try:
        module = importlib.import_module("trainwright_lint.rules")
    except ImportError:
        return {}
    rules = getattr(module, "RULES", None)
    return rules if isinstance(rules, Mapping) else {}


def _normalise(raw: str) -> tuple[str, str | None]:
    """``"Trainer._save_checkpoint()"`` -> ``("_save_checkpoint", "Trainer")``; also strips ``self.``/``super().``."""
    name = raw.strip().removesuffix("()")
    for prefix in ("self.", "super()."):
        name = name.removeprefix(prefix)
    cls = None
    head, dot, tail = name.rpartition(".")
    if dot:
        cls_head = head.rpartition(".")[2]
        if cls_head in CLASSES:
            cls = cls_head
        elif cls_head in ("TrainerCallback", "CallbackHandler"):
            cls = None
        name = tail
    return name, cls


def suggestions(catalog: Catalog, name: str, limit: int = 6) -> list[str]:
    vocabulary = sorted(
        set(catalog.method_names("Trainer"))
        | set(catalog.method_names("Seq2SeqTrainer"))
        | set(catalog.event_names())
        | set(catalog.guidance_names())
        | set(_rules())
    )
    lowered = {v.lower(): v for v in vocabulary}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.6)
    picks = [lowered[c] for c in close]
    stem = name.lower().strip("_")
    if len(stem) >= 3:
        picks += [v for v in vocabulary if stem in v.lower() and v not in picks]
    return picks[:limit]


# ---------------------------------------------------------------------------------------------- method


def _range(first: str, last: str | None) -> str:
    return f"{first} .. {last}" if last is not None else f"{first} .. now"


def method_report(
    catalog: Catalog, name: str, cls: str, version: str, releases: tuple[str, ...] = ()
) -> dict[str, Any]:
    """What the catalogue knows of ``cls.name``, judged on every release of ``releases`` (the target
    range; default: ``version`` alone). ``*_at_target`` hold on all of them; ``not_*_on`` list where not."""
    releases = releases or (version,)
    history = catalog.method_history(name, cls)
    assert history is not None
    infos = {r: catalog.at(r).method(name, cls) for r in releases}
    not_defined = [r for r, i in infos.items() if i is None]
    not_called = [r for r, i in infos.items() if i is not None and not i.called]
    latest = catalog.at(history.last or catalog.newest).method(name, cls)
    assert latest is not None
    called = catalog.called_versions(name, cls)
    return {
        "kind": "method",
        "method_kind": latest.kind,
        "name": name,
        "class": cls,
        "owner": history.owner,
        "private": history.private,
        "first": history.first,
        "last": history.last,
        "target_version": version,
        "target_releases": list(releases),
        "defined_at_target": not not_defined,
        "called_at_target": not not_defined and not not_called,
        "not_defined_on": not_defined,
        "not_called_on": not_called,
        "purpose": catalog.purpose(name),
        "alternative": catalog.alternative(name),
        "signatures": [
            {"first": a, "last": b, "signature": sig.text, "target": _overlaps(catalog, a, b, releases)}
            for a, b, sig in history.signatures
        ],
        "calls": [
            {
                "first": a,
                "last": b,
                "call_sites": _describe_sites(sites),
                "target": _overlaps(catalog, a, b, releases),
            }
            for a, b, sites in catalog.call_history(name, cls)
        ],
        "never_called": [{"first": a, "last": b} for a, b in history.never_called],
        "used_in": {"first": called[0], "last": called[-1]} if called else None,
        "guidance": _guidance_dict(catalog.guidance(name)),
        "events": events_report(name, version) if cls == "Trainer" else None,
    }


def _describe_sites(sites: tuple[CallSite, ...]) -> list[str]:
    """One line per call site; calls from other transformers modules with the same shape are grouped."""
    lines: list[str] = []
    groups: dict[tuple[str, str], list[str]] = {}
    for site in sites:
        if "." not in site.caller:
            lines.append(site.describe())
            continue
        parts = site.caller.split(".")
        module = ".".join(parts[:2] if parts[0] == "integrations" else parts[:1])
        shape = site.describe().split(": ", 1)[1]
        groups.setdefault((module, shape), []).append(site.caller)
    for (module, shape), callers in groups.items():
        label = callers[0] if len(callers) == 1 else f"{module} ({len(callers)} functions)"
        lines.append(f"{label}: {shape}")
    return lines


def _overlaps(catalog: Catalog, first: str, last: str | None, releases: tuple[str, ...]) -> bool:
    """Whether a release span of the catalogue holds some release of the target."""
    index = catalog.versions.index
    low, high = index(first), index(last if last is not None else catalog.newest)
    return any(low <= index(r) <= high for r in releases)


def _where(missing: list[str], releases: list[str]) -> str | None:
    """``at 4.45.2`` / ``on 4.44.0–4.44.2 of the target range`` / ``on any release of the target range``:
    where a method is missing, or None when it is missing nowhere."""
    if not missing:
        return None
    if len(releases) == 1:
        return f"at {releases[0]}"
    if len(missing) == len(releases):
        return f"on any release of the target range ({releases[0]}–{releases[-1]})"
    return f"on {describe_release_runs(tuple(missing), tuple(releases))} of the target range"


def _guidance_dict(g: Guidance | None) -> dict[str, Any] | None:
    if g is None:
        return None
    return {
        "verdict": g.verdict,
        "summary": g.summary,
        "events": list(g.events),
        "public_methods": list(g.public_methods),
        "arguments": list(g.arguments),
        "callbacks": list(g.callbacks),
        "evidence": list(g.evidence),
    }


TARGET_MARK = f"  <-{GLUE}target"  # glued: the two halves of the pointer never land on different lines
SIGNATURE_GUTTER = 21  # "  4.46.0 .. 4.46.3   " before a signature; continuation lines align after it

# What explain paints once the text is laid out (terminal.Terminal.paint).
PAINT: tuple[tuple[str, str], ...] = (
    (r"\A.*(?:\n  .*)*", "heading"),  # the title, with its continuation lines
    (r"^(?:What it does|When it runs \(.*\)|When it fires|Signature history|Instead|Evidence):$", "heading"),
    (r"^Advice: .*$", "heading"),
    (r"NOT (?:DEFINED|CALLED|AN EVENT)", "warning"),
    (r"<- target", "mark"),
)


def method_text(catalog: Catalog, r: dict[str, Any], note: str, term: Terminal | None = None) -> str:
    term = term or Terminal()
    visibility = "private" if r["private"] else "public"
    span = _range(since_text(catalog, r["first"]), r["last"])
    lines = term.wrap(
        f"{r['class']}.{r['name']}  ({visibility} {r['method_kind']}, defined on {r['owner']}; "
        f"in releases {span})",
        hang=2,
    )
    access = f"self.{r['name']}" if r["method_kind"] == "property" else f"super().{r['name']}()"
    lines += ["", *term.wrap(f"Target: {note}", hang=2)]
    missing = _where(r["not_defined_on"], r["target_releases"])
    uncalled = _where(r["not_called_on"], r["target_releases"])
    if missing is not None:
        lines += term.wrap(
            f"NOT DEFINED {missing}: an override is never called there and {access} raises AttributeError."
        )
    if uncalled is not None:
        lines += term.wrap(
            f"NOT CALLED by transformers {uncalled}: an override is silently ignored there unless your "
            "own code calls it."
        )
    if r["purpose"]:
        lines += ["", "What it does:", *term.wrap(r["purpose"], indent="  ")]
    lines += ["", "When it runs (how the Trainer calls it):"]
    if r["calls"]:
        for c in r["calls"]:
            lines.append(
                f"  {_range(c['first'], c['last'])}" + (TARGET_MARK.replace(GLUE, " ") if c["target"] else "")
            )
            for site in c["call_sites"]:
                lines += term.wrap(site, indent=" " * 6, hang=2)
    elif r["used_in"]:
        used = r["used_in"]
        lines += term.wrap(
            f"read or passed as a value (no direct call) by the Trainer in {used['first']} .. {used['last']}",
            indent="  ",
        )
    else:
        lines += term.wrap(
            "never called from Trainer code in any catalogued release (an entry point you call yourself)",
            indent="  ",
        )
    if r["calls"] or r["used_in"]:
        for nc in r["never_called"]:
            lines += term.wrap(f"not called by the Trainer in {_range(nc['first'], nc['last'])}", indent="  ")
    lines += events_lines(term, r.get("events"))
    lines += ["", "Signature history:"]
    for s in r["signatures"]:
        lines += _signature_lines(term, _range(s["first"], s["last"]), s["signature"], s["target"])
    lines += _advice_lines(term, r["guidance"], r["alternative"])
    return term.paint("\n".join(lines), PAINT)


def _signature_lines(term: Terminal, span: str, signature: str, target: bool) -> list[str]:
    """A release range and its signature; a long signature breaks after its commas and continues
    under its first parameter, or under the range when the range column leaves too little room."""
    gutter = f"  {span}".ljust(SIGNATURE_GUTTER - 1) + " "
    text = signature + (TARGET_MARK if target else "")
    if term.width - len(gutter) < 30:  # narrow terminal: the signature goes under its range
        return [f"  {span}", *term.wrap(text, indent=" " * 4, hang=1)]
    return term.wrap(text, indent=" " * len(gutter), hang=1, lead=gutter)


def _advice_lines(term: Terminal, g: dict[str, Any] | None, alternative: str | None) -> list[str]:
    if g is None:
        if alternative:
            return ["", "Instead:", *term.wrap(alternative, indent="  ")]
        return [
            "",
            *term.wrap("No hand-written advice for this name; the history above is all the catalogue has."),
        ]
    headline = {
        "override": "Advice: subclass and override (with the safe signature)",
        "callback": "Advice: use a TrainerCallback instead of an override",
        "argument": "Advice: use an argument instead of an override",
        "avoid": "Advice: do not override this",
    }[g["verdict"]]
    lines = ["", headline, *term.wrap(g["summary"], indent="  ")]
    for label, key in (
        ("Callback events", "events"),
        ("Public methods", "public_methods"),
        ("Arguments (TrainingArguments / Trainer)", "arguments"),
        ("Reference callbacks (trainwright.callbacks)", "callbacks"),
    ):
        if g[key]:
            lines += term.wrap(f"{label}: {', '.join(g[key])}", indent="  ", hang=4)
    if g["evidence"]:
        lines += ["", "Evidence:"] + [f"  {url}" for url in g["evidence"]]
    return lines


# ----------------------------------------------------------------------------------------------- event


def event_report(catalog: Catalog, name: str, version: str, releases: tuple[str, ...] = ()) -> dict[str, Any]:
    releases = releases or (version,)
    history = catalog.event_history(name)
    assert history is not None
    at_target = catalog.at(version).events.get(name)
    absent = [r for r in releases if name not in catalog.at(r).events]
    ordered = list(catalog.at(version).events)
    neighbours: dict[str, str | None] = {"after": None, "before": None}
    if name in ordered:
        i = ordered.index(name)
        neighbours = {
            "after": ordered[i - 1] if i else None,
            "before": ordered[i + 1] if i + 1 < len(ordered) else None,
        }
    return {
        "kind": "event",
        "name": name,
        "order": history.order,
        "fires": history.fires,
        "since": history.since,
        "until": history.until,
        "target_version": version,
        "target_releases": list(releases),
        "present_at_target": not absent,
        "not_present_on": absent,
        "kwargs": list(at_target.kwargs if at_target else history.kwargs),
        "neighbours": neighbours,
        "guidance": _guidance_dict(catalog.guidance(name)),
    }


def event_text(catalog: Catalog, r: dict[str, Any], note: str, term: Terminal | None = None) -> str:
    term = term or Terminal()
    span = _range(since_text(catalog, r["since"]), r["until"])
    lines = [
        *term.wrap(f"TrainerCallback.{r['name']}  (callback event; in releases {span})", hang=2),
        "",
        *term.wrap(f"Target: {note}", hang=2),
    ]
    absent = _where(r["not_present_on"], r["target_releases"])
    if absent is not None:
        lines += term.wrap(f"NOT AN EVENT {absent}: a callback method with this name is never called there.")
    lines += ["", "When it fires:", *term.wrap(r["fires"] or "(not documented)", indent="  ")]
    n = r["neighbours"]
    if n["after"] or n["before"]:
        lines += term.wrap(
            f"Order in train(): after {n['after'] or '(start)'}, before {n['before'] or '(end)'}.",
            indent="  ",
        )
    lines += [
        "",
        *term.wrap(f"Called as: {r['name']}(self, args, state, control, **kwargs)", hang=11),
        *term.wrap(
            f"kwargs passed: {', '.join(r['kwargs'])}. Accept **kwargs: the set grows between releases.",
            indent="  ",
        ),
    ]
    g = r["guidance"]
    if g is not None:
        lines += _advice_lines(term, g, None)
    return term.paint("\n".join(lines), PAINT)


# ------------------------------------------------------------------------------------------------ rule


def rule_text(code: str) -> tuple[str | None, str]:
    rules = _rules()
    rule = rules.get(code.upper())
    if rule is None:
        return None, code.upper()
    return str(rule.explain()), code.upper()


# ------------------------------------------------------------------------------------------- command


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="explain a Trainer method, a callback event or a lint rule code",
        description=(
            "Explain NAME: a Trainer method (compute_loss, _save_checkpoint, Seq2SeqTrainer.prediction_step), a "
            "TrainerCallback event (on_save) or a lint rule code (TW101): what it does, when it runs, its "
            "signature history, whether to subclass or use a callback, and evidence links."
        ),
        epilog=ENVIRONMENT_HELP,
    )
    parser.add_argument("name", help="method, event or rule code")
    add_common_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    described = resolve_or_report(args.transformers_version, "explain")
    if described is None:
        return 2
    version, releases = described.version, described.releases
    note = described.target.describe()
    raw = args.name
    if RULE_CODE.match(raw.strip()):
        text, code = rule_text(raw.strip())
        if text is not None:
            emit(
                json.dumps({"kind": "rule", "code": code, "text": text}, indent=2)
                if args.format == "json"
                else text
            )
            return 0
        return _unknown(catalog, code, args.format, what="rule")
    name, cls = _normalise(raw)
    if cls is None and catalog.ever_defined(name, "Trainer"):
        cls = "Trainer"
    elif cls is None and catalog.ever_defined(name, "Seq2SeqTrainer"):
        cls = "Seq2SeqTrainer"
    if cls is not None and catalog.ever_defined(name, cls):
        report = {**method_report(catalog, name, cls, version, releases), "target": described.as_json()}
        emit(
            json.dumps(report, indent=2)
            if args.format == "json"
            else method_text(catalog, report, note, Terminal.detect())
        )
        return 0
    if catalog.event_history(name) is not None:
        report = {**event_report(catalog, name, version, releases), "target": described.as_json()}
        emit(
            json.dumps(report, indent=2)
            if args.format == "json"
            else event_text(catalog, report, note, Terminal.detect())
        )
        return 0
    return _unknown(catalog, name, args.format)


def _unknown(catalog: Catalog, name: str, fmt: str, what: str = "name") -> int:
    picks = suggestions(catalog, name)
    if fmt == "json":
        print(json.dumps({"kind": "unknown", "name": name, "did_you_mean": picks}, indent=2))
        return 2
    if what == "rule":
        message = f"unknown rule {name!r}"
        if not _rules():
            message += " (this build ships no lint rules)"
    else:
        message = (
            f"{name!r} is not a Trainer method, a TrainerCallback event or a rule code in the catalogue "
            f"({catalog.oldest}..{catalog.newest})"
        )
        if name.startswith("on_"):
            message += (
                "; TrainerCallback has no such event, so a callback method with this name is never called"
            )
        else:  # it may be new in a release after the catalogue: say how to cover that release
            message += (
                f"; if it is new in a transformers release after {catalog.newest}, cover that release "
                "with `trainwright catalog add VERSION` (or install it) and ask again"
            )
    print(f"trainwright explain: {message}", file=sys.stderr)
    if picks:
        print(f"did you mean: {', '.join(picks)}?", file=sys.stderr)
    return 2
