"""Re-lint only the classes an edit can change: the language server's answer to a keystroke.

The class rules judge one class at a time against its hierarchy (``Workspace.hierarchy``: its MRO,
its subclasses and, for a mixin, the classes that use it) and the module's names; the module rules
see the whole module. So a class's findings are a function of its own text, the text of the classes
of its hierarchy, and what the module says outside its classes. Each lint keeps, per class, that
fingerprint with the findings; the next lint of the same document re-runs the class rules only on
the classes whose fingerprint changed, and the module rules always. A class's place is part of its fingerprint
(messages name lines): an edit that adds or removes lines re-lints the classes below it, and those
whose hierarchy holds the edited class. The tests compare the result with a whole lint after every
edit of a sequence.
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

Fingerprint = tuple[object, ...]


@dataclass
class Memo:
    """What one lint of a document leaves for the next: the module's fingerprint, and per class
    key its fingerprint and findings."""

    module: Fingerprint
    classes: dict[str, tuple[Fingerprint, list[Finding]]] = field(default_factory=dict)


def module_fingerprint(unit: FileUnit) -> Fingerprint:
    """Everything of the module outside its top-level classes, and what the summary says about every
    class (name, bases, decorators) and the module's names; not where they are (each class's
    fingerprint holds its own place and its hierarchy's)."""
    spans = [
        (min([n.lineno, *(d.lineno for d in n.decorator_list)]), n.end_lineno or n.lineno)
        for n in unit.tree.body
        if isinstance(n, ast.ClassDef)
    ]
    inside = {line for first, last in spans for line in range(first, last + 1)}
    outside = tuple(text for n, text in enumerate(unit.lines, 1) if n not in inside)
    summary = unit.summary
    classes = tuple((q, c.bases, c.decorators) for q, c in summary.classes.items())
    return (outside, classes, summary.instance_stores, summary.mentions, summary.all_names, summary.stars)


def class_fingerprint(workspace: Workspace, key: str) -> Fingerprint:
    """The class's text and place, and those of every class of its hierarchy."""
    parts: list[object] = []
    for k in dict.fromkeys([key, *workspace.hierarchy(key)]):
        found = workspace.class_of(k)
        if found is not None:
            unit, cls = found
            parts.append((k, cls.line, unit.text(cls.line, cls.end_line)))
    return tuple(parts)


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
    stale: set[str] = set()
    for key in workspace.model.target_classes(unit.path):
        fingerprint = class_fingerprint(workspace, key)
        old = kept.get(key)
        now.classes[key] = (fingerprint, old[1] if old is not None and old[0] == fingerprint else [])
        if old is None or old[0] != fingerprint:
            stale.add(key)
    if stale and class_rules:
        fresh: dict[str, list[Finding]] = {}
        lint_unit(unit, workspace, releases, class_rules, classes=stale, per_class=fresh)
        for key, own in fresh.items():
            now.classes[key] = (now.classes[key][0], own)
    for _fingerprint, own in now.classes.values():
        found += own
    found = sorted((replace(f, path=path) for f in found), key=Finding.sort_key)
    return noqa.filter_noqa(found, lines), now
