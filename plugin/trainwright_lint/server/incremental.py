"""Re-lint only the classes an edit can change: the language server's answer to a keystroke.

The class rules judge one class at a time against its hierarchy (``Workspace.hierarchy``: its MRO,
its subclasses and, for a mixin, the classes that use it) and the module's names; the module rules
see the whole module. So a class's findings are a function of its own text, the text of the classes
of its hierarchy, and what the module says outside its classes. Each lint keeps, per class, that
fingerprint with the findings; the next lint of the same document re-runs the class rules only on
the classes whose fingerprint changed, and the module rules always. A class's place is not part of
its fingerprint: a class whose hierarchy moved as one (a line added above it) keeps its findings,
moved by as many lines (``shift``), so an edit that adds or removes lines re-lints only the classes
whose hierarchy holds the edited class, as typing on a line does. The tests compare the result with a
whole lint after every edit of a sequence.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field, replace

from trainwright_lint import noqa, prefilter
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.analysis.workspace import Workspace, parse_source
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import enabled_rules, lint_unit, target_releases
from trainwright_lint.finding import Finding
from trainwright_lint.project.summary import summarise
from trainwright_lint.server.shift import shifted

Fingerprint = tuple[object, ...]
Spans = tuple[tuple[int, int], ...]


@dataclass
class Kept:
    """One class's last lint: its fingerprint, the (first, last) lines of the classes of its hierarchy
    in the document then (in the fingerprint's order), and its findings (not noqa-filtered)."""

    fingerprint: Fingerprint
    spans: Spans
    findings: list[Finding]


@dataclass
class Memo:
    """What one lint of a document leaves for the next: the module's fingerprint, and per class
    key what its lint left (``Kept``)."""

    module: Fingerprint
    classes: dict[str, Kept] = field(default_factory=dict)


def module_fingerprint(unit: FileUnit) -> Fingerprint:
    """The module's top-level statements outside its classes, in order, with a mark where each class
    stands among them, and what the summary says about every class (name, bases, decorators) and the
    module's names; not where any of it is, nor the blank and comment lines between statements (a
    class's findings do not depend on them; each class's fingerprint holds its hierarchy's places)."""
    parts: list[object] = []
    for node in unit.tree.body:
        if isinstance(node, ast.ClassDef):
            parts.append(("class", node.name))
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        parts.append(unit.text(first, node.end_lineno or node.lineno))
    summary = unit.summary
    classes = tuple((q, c.bases, c.decorators) for q, c in summary.classes.items())
    return (
        tuple(parts),
        classes,
        summary.instance_stores,
        summary.mentions,
        summary.all_names,
        summary.stars,
    )


def class_fingerprint(workspace: Workspace, key: str, here: str) -> tuple[Fingerprint, Spans]:
    """The text of the class and of every class of its hierarchy (with the place of those in other
    files, which this lint does not move), and the (first, last) lines of those in the document
    ``here``: the findings of a class whose fingerprint is unchanged are the old ones, moved by the
    lines its hierarchy moved, when it moved as one (``shift``)."""
    parts: list[object] = []
    spans: list[tuple[int, int]] = []
    for k in dict.fromkeys([key, *workspace.hierarchy(key)]):
        found = workspace.class_of(k)
        if found is None:
            continue
        unit, cls = found
        text = unit.text(cls.line, cls.end_line)
        if unit.path == here:
            parts.append((k, text))
            spans.append((cls.line, cls.end_line))
        else:
            parts.append((k, unit.path, cls.line, text))
    return tuple(parts), tuple(spans)


def reused(old: Kept | None, fingerprint: Fingerprint, spans: Spans, here: str) -> list[Finding] | None:
    """The findings of ``old`` for a class now at ``spans``, or ``None`` when it must be linted again:
    its fingerprint changed, its hierarchy did not move as one, or a finding names a place that did
    not move with it."""
    if old is None or old.fingerprint != fingerprint:
        return None
    if old.spans == spans:
        return old.findings
    deltas = {new[0] - was[0] for new, was in zip(spans, old.spans)}
    if len(deltas) != 1 or len(spans) != len(old.spans):
        return None
    delta = deltas.pop()
    out = []
    for f in old.findings:
        moved = shifted(f, delta, old.spans, here)
        if moved is None:
            return None
        out.append(moved)
    return out


def current_unit(path: str, text: str, workspace: Workspace) -> FileUnit:
    """The document's unit in the workspace, added (replacing the file's) when its text is new.
    Raises ``SyntaxError`` (and what ``ast.parse`` raises) when the text does not parse."""
    real = os.path.realpath(path) if os.path.exists(path) else os.path.abspath(path)
    known = workspace.units.get(real)
    if known is not None and known.source == text:
        return known
    tree = parse_source(text, path)
    unit = FileUnit(real, text, tree, summarise(tree, real, text, workspace.words, workspace.tracked))
    workspace.add(unit)
    return unit


def lint_document(
    path: str, text: str, config: LintConfig, workspace: Workspace, memo: Memo | None
) -> tuple[list[Finding], Memo | None]:
    """The findings ``trainwright lint`` reports for ``text`` as the file at ``path`` (``# noqa``
    honoured), reusing ``memo``'s findings of the classes the edit cannot have changed; and the
    memo for the next lint. Raises ``SyntaxError`` when the text does not parse."""
    lines = text.splitlines()
    words = prefilter.gate_words(config.trainer_bases)
    if noqa.file_is_skipped(lines, text) or not prefilter.worth_linting(text, words):
        return [], None
    unit = current_unit(path, text, workspace)
    rules = enabled_rules(config, path)
    releases = target_releases(config)
    found = lint_unit(unit, workspace, releases, [r for r in rules if r.scope == "module"])
    class_rules = [r for r in rules if r.scope == "class"]
    now = Memo(module_fingerprint(unit))
    kept = memo.classes if memo is not None and memo.module == now.module else {}
    shown = workspace.model.relpath(unit.path)
    stale: set[str] = set()
    for key in workspace.model.target_classes(unit.path):
        fingerprint, spans = class_fingerprint(workspace, key, unit.path)
        findings = reused(kept.get(key), fingerprint, spans, shown)
        now.classes[key] = Kept(fingerprint, spans, findings or [])
        if findings is None:
            stale.add(key)
    if stale and class_rules:
        fresh: dict[str, list[Finding]] = {}
        lint_unit(unit, workspace, releases, class_rules, classes=stale, per_class=fresh)
        for key, own in fresh.items():
            now.classes[key].findings = own
    for entry in now.classes.values():
        found += entry.findings
    found = sorted((replace(f, path=path) for f in found), key=Finding.sort_key)
    return noqa.filter_noqa(found, lines), now
