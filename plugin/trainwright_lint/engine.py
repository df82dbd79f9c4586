"""The lint engine: from a file's facts to its findings, for every release of the target range.

For each class of a file that the project model says is a Trainer subclass, a mixin combined with
one, or a callback, the engine builds a ``ClassContext`` and dispatches the rules whose role matches.
Releases are data, as each rule declares (``Rule.release_facts``): a class rule that reads the release
is asked for its ``candidates`` once per class; each candidate names the catalogue facts it reads, the
catalogue splits the target range into runs over which those facts stay the same
(``Catalog.method_runs``), and the candidate is judged once per run (``_PointRuns``). A class rule that
does not read the release is judged once, at the newest release point; a module rule at every release
point of the range (``TargetReleases``). Either way the engine merges what holds into one finding per
place, saying on which releases of the range it holds, and keeps a finding's fix only if the rule says
the fixed code is valid at *every* release of the range. Everything here is pure: no file is read that
the workspace does not already hold, nothing is written.
"""

from __future__ import annotations

import ast
import os
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from trainwright.catalog import Catalog, load_catalog
from trainwright_lint import prefilter
from trainwright_lint.analysis.facts import FactStore
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.analysis.workspace import Workspace, parse_source
from trainwright_lint.configuration import LintConfig, targets_of
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import MIXIN, ProjectModel, split_key
from trainwright_lint.project.summary import ClassSummary, summarise
from trainwright_lint.rules import RULES
from trainwright_lint.rules.base import (
    Candidate,
    ClassContext,
    Fact,
    ModuleContext,
    Rule,
    describe_release_runs,
)

Ctx = TypeVar("Ctx", ClassContext, ModuleContext)


@dataclass(frozen=True)
class TargetReleases:
    """The catalogued releases to check: every one of the target range, ascending."""

    transformers: tuple[str, ...]
    trl: tuple[str, ...]

    def points(self) -> list[tuple[str, str]]:
        """(transformers, TRL) pairs to evaluate version-dependent rules at: each transformers
        release with the newest TRL, and each older TRL release with the newest transformers."""
        tf, trl = self.transformers, self.trl
        out = [(v, trl[-1]) for v in tf]
        out += [(tf[-1], v) for v in trl[:-1]]
        return out


def target_releases(config: LintConfig) -> TargetReleases:
    """The releases ``config`` targets, by the one resolution every front end uses."""
    targets = targets_of(config)
    return TargetReleases(transformers=targets.transformers.releases, trl=targets.trl.releases)


def enabled_rules(config: LintConfig, path: str | None = None) -> list[Rule]:
    rules = [cls() for code, cls in sorted(RULES.items()) if _on(cls, config, path)]
    for rule in rules:
        rule.unmoved_too = bool(config.preview)
    return rules


def _on(rule: type[Rule], config: LintConfig, path: str | None) -> bool:
    """Selected, and not a preview rule unless preview is on (``Rule.preview``)."""
    return (config.preview or not rule.preview) and config.code_enabled(rule.code, path)


@dataclass(frozen=True)
class TextNeeds:
    """What the enabled rules ask a project-wide run to find in every file's text (``Rule``'s
    ``TRACKED_ATTRIBUTES`` and ``script_gate``), so that the runner schedules without knowing rules."""

    tracked: tuple[str, ...]
    gates: tuple[Callable[[str], bool], ...]

    def tracks(self, text: str) -> bool:
        """The text may store an attribute a rule tracks on an instance."""
        return any(attr in text for attr in self.tracked)

    def is_script(self, text: str) -> bool:
        """A file without a target class that a rule lints all the same."""
        return any(gate(text) for gate in self.gates)


def text_needs(config: LintConfig) -> TextNeeds:
    """The text needs of the rules enabled anywhere in the project."""
    rules = [cls for code, cls in sorted(RULES.items()) if _on(cls, config, None)]
    tracked = tuple(dict.fromkeys(a for r in rules for a in r.TRACKED_ATTRIBUTES))
    return TextNeeds(tracked, tuple(r.script_gate for r in rules if r.script_gate is not None))


@dataclass(frozen=True)
class LintPass:
    """What every class and module lint of one file shares: the project, the target range and how to
    judge. ``per_release`` judges each release-reading rule at every release point instead of once per
    run of equal facts: the slow reference that the runs must agree with (tests only)."""

    workspace: Workspace
    releases: TargetReleases
    timings: dict[str, float] | None = None
    per_release: bool = False

    def timed(self, rule: Rule, judge: Callable[..., list[Finding]], *args: Any) -> list[Finding]:
        """``judge(rule, *args)``, its CPU seconds added to ``rule``'s in ``timings`` (when given)."""
        if self.timings is None:
            return judge(rule, *args)
        started = time.process_time()
        found = judge(rule, *args)
        self.timings[rule.code] = self.timings.get(rule.code, 0.0) + time.process_time() - started
        return found


@dataclass(frozen=True)
class TargetClass:
    """One class of a file that the class rules lint: its key and role in the project model, its
    summary and node."""

    key: str
    role: str
    unit: FileUnit
    cls: ClassSummary
    node: ast.ClassDef


def lint_unit(
    unit: FileUnit,
    workspace: Workspace,
    releases: TargetReleases,
    rules: Sequence[Rule],
    timings: dict[str, float] | None = None,
    *,
    per_release: bool = False,
    classes: Container[str] | None = None,
    per_class: dict[str, list[Finding]] | None = None,
) -> list[Finding]:
    """The findings of one file (not noqa-filtered: front ends decide), sorted. ``timings``, when
    given, accumulates CPU seconds per rule code (a shared fact counts for the rule that needed it
    first). ``per_release``: see ``LintPass``. ``classes``, when given, limits the class rules to those
    class keys, and ``per_class`` receives each linted class's findings (the language server re-lints
    only the classes an edit can change)."""
    if not rules:
        return []
    run = LintPass(workspace, releases, timings, per_release)
    findings: list[Finding] = []
    module_rules = [r for r in rules if r.scope == "module" and r.wants_module(unit)]
    if module_rules:
        findings += _lint_module(unit, run, module_rules)
    class_rules = [r for r in rules if r.scope == "class"]
    for target in _target_classes(unit, workspace.model, classes):
        applicable = [r for r in class_rules if target.role in r.roles]
        if applicable:
            found = _lint_class(target, run, applicable)
            if per_class is not None:
                per_class[target.key] = found
            findings += found
    findings.sort(key=Finding.sort_key)
    return findings


def _target_classes(
    unit: FileUnit, model: ProjectModel, classes: Container[str] | None
) -> Iterator[TargetClass]:
    """The classes of ``unit`` the class rules lint (those of ``classes`` when given)."""
    for key in model.target_classes(unit.path):
        if classes is not None and key not in classes:
            continue
        role = model.role(key)
        cls = unit.summary.classes[split_key(key)[1]]  # type: ignore[index]
        node = unit.class_node(cls)
        if node is None or role is None or model.info(key).handler:
            continue  # a CallbackHandler dispatches events: its returns are the control object by design
        yield TargetClass(key, role, unit, cls, node)


class _ClassPoints:
    """The contexts of one class at each release point it is judged at, built on first use and sharing
    one store of the class's release-independent facts."""

    def __init__(self, target: TargetClass, run: LintPass) -> None:
        model: ProjectModel = run.workspace.model
        self.target = target
        self.releases = run.releases
        self.workspace = run.workspace
        self.info = model.info(target.key)
        self.users = model.mixin_users().get(target.key, ()) if target.role == MIXIN else ()
        self.basis = model.info(self.users[0]) if self.users else self.info
        self.catalog = load_catalog()
        self.trl_catalog = load_catalog("trl") if self.basis.library_cls else None
        self.points = run.releases.points()
        self.newest = (
            self.points[0] if len(self.points) == 1 else (run.releases.transformers[-1], run.releases.trl[-1])
        )
        self.shared = FactStore()  # the class's release-independent facts, for every point
        self._contexts: dict[tuple[str, str], ClassContext] = {}

    def at(self, point: tuple[str, str]) -> ClassContext:
        ctx = self._contexts.get(point)
        if ctx is None:
            ctx = self._contexts[point] = self._context(*point)
        return ctx

    def every(self) -> dict[tuple[str, str], ClassContext]:
        return {p: self.at(p) for p in self.points}

    def _context(self, tf: str, trl: str) -> ClassContext:
        t, trl_catalog = self.target, self.trl_catalog
        return ClassContext(
            key=t.key,
            info=self.info,
            role=t.role,
            unit=t.unit,
            cls=t.cls,
            node=t.node,
            workspace=self.workspace,
            catalog=self.catalog,
            view=self.catalog.at(tf),
            releases=self.releases.transformers,
            users=self.users,
            catalog_cls=self.basis.catalog_cls,
            library_cls=self.basis.library_cls,
            library_catalog=trl_catalog,
            library_view=trl_catalog.at(trl) if trl_catalog is not None else None,
            library_releases=self.releases.trl,
            shared=self.shared,
        )


def _lint_class(target: TargetClass, run: LintPass, rules: Sequence[Rule]) -> list[Finding]:
    """The class rules' findings on one class. A rule that reads the release (``Rule.release_facts``)
    judges its candidates once per run of releases with equal facts; one that does not is judged once,
    at the newest release point."""
    points = _ClassPoints(target, run)
    runs = _PointRuns(points.points, run.releases, points.catalog, points.trl_catalog)
    out: list[Finding] = []
    for rule in rules:
        out += rule.reported(run.timed(rule, _judge_class_rule, points, runs, run.per_release))
    return out


def _judge_class_rule(rule: Rule, points: _ClassPoints, runs: _PointRuns, per_release: bool) -> list[Finding]:
    releases = points.releases
    if not rule.reads_release():
        return _with_fix_range(rule, list(rule.check(points.at(points.newest))), points.every(), releases)
    if per_release:
        return _judge_every_point(rule, points.every(), releases, rule.check)
    return _judge_candidates(rule, rule.candidates(points.at(points.newest)), runs, points.at, releases)


class _PointRuns:
    """The release points of the target range grouped by what the catalogue says about some facts:
    points in one group answer every question about those facts alike (releases as data)."""

    def __init__(
        self,
        points: list[tuple[str, str]],
        releases: TargetReleases,
        catalog: Catalog,
        trl_catalog: Catalog | None,
    ) -> None:
        self.points = points
        self._catalog = catalog
        self._trl_catalog = trl_catalog
        self._releases = releases
        tf_index = {v: i for i, v in enumerate(releases.transformers)}
        trl_index = {v: i for i, v in enumerate(releases.trl)}
        self._tf_of = [tf_index[p[0]] for p in points]
        self._trl_of = [trl_index[p[1]] for p in points]
        self._fact_runs: dict[Fact, tuple[object, ...]] = {}
        self._groups: dict[tuple[Fact, ...], list[list[int]]] = {}

    def _runs(self, fact: Fact) -> tuple[object, ...]:
        """Per point, the id of its run for ``fact``."""
        found = self._fact_runs.get(fact)
        if found is None:
            kind, cls, name = fact
            if kind == "transformers":
                ids = self._catalog.method_runs(name, cls, self._releases.transformers)
                found = tuple(ids[i] for i in self._tf_of)
            elif kind == "events":
                ids = self._catalog.event_runs(self._releases.transformers)
                found = tuple(ids[i] for i in self._tf_of)
            elif self._trl_catalog is None:
                found = (0,) * len(self.points)  # not a TRL class: TRL's facts never apply here
            elif kind == "trl":
                ids = self._trl_catalog.method_runs(name, cls, self._releases.trl)
                found = tuple(ids[i] for i in self._trl_of)
            elif kind == "trl-class":
                ids = self._trl_catalog.class_runs(cls, self._releases.trl)
                found = tuple(ids[i] for i in self._trl_of)
            else:
                raise ValueError(f"unknown catalogue fact {fact!r}")
            self._fact_runs[fact] = found
        return found

    def groups(self, reads: tuple[Fact, ...]) -> list[list[int]]:
        """Point indices, ascending, grouped by the runs of every fact in ``reads``."""
        found = self._groups.get(reads)
        if found is None:
            if not reads:
                found = [list(range(len(self.points)))]
            else:
                columns = [self._runs(f) for f in reads]
                by_key: dict[tuple[object, ...], list[int]] = {}
                for i in range(len(self.points)):
                    by_key.setdefault(tuple(c[i] for c in columns), []).append(i)
                found = list(by_key.values())
            self._groups[reads] = found
        return found


def _judge_candidates(
    rule: Rule,
    candidates: Iterable[Candidate],
    runs: _PointRuns,
    at: Callable[[tuple[str, str]], ClassContext],
    releases: TargetReleases,
) -> list[Finding]:
    """Each candidate judged once per group of points with equal facts, at the group's newest point
    (its message names that release); merged per place as the per-release evaluation would."""
    points = runs.points
    newest_trl = releases.trl[-1]
    held: dict[tuple[object, ...], list[tuple[int, Finding, Candidate, list[int]]]] = {}
    for candidate in candidates:
        for group in runs.groups(candidate.reads):
            found = candidate.at(at(points[group[-1]]))
            if found is None:
                continue
            seen = held.setdefault(_place(found), [])
            seen += [(i, found, candidate, group) for i in group]
    out = []
    for seen in held.values():
        seen.sort(key=lambda item: item[0])
        merged = _merge([(points[i], f) for i, f, _c, _g in seen], releases)
        if merged.fix is not None:
            _i, _f, candidate, _g = seen[-1]
            broken: list[str] = []
            for group in runs.groups(candidate.reads):
                members = [points[i] for i in group if points[i][1] == newest_trl]
                if members and not rule.fix_is_valid(at(members[-1]), merged.fix):
                    broken += [tf for tf, _trl in members]
            if broken:
                merged = _without_fix(merged, broken, releases)
        out.append(merged)
    return out


def _lint_module(unit: FileUnit, run: LintPass, rules: Sequence[Rule]) -> list[Finding]:
    """The module rules' findings on one file, each judged at every release point of the range."""
    catalog = load_catalog()
    trl_catalog = load_catalog("trl")
    releases = run.releases
    contexts = {
        (tf, trl): ModuleContext(
            unit=unit,
            workspace=run.workspace,
            catalog=catalog,
            view=catalog.at(tf),
            library_catalog=trl_catalog,
            library_view=trl_catalog.at(trl),
            releases=releases.transformers,
            library_releases=releases.trl,
        )
        for tf, trl in releases.points()
    }
    out: list[Finding] = []
    for rule in rules:
        out += run.timed(rule, _judge_every_point, contexts, releases, rule.check_module)
    return out


def _judge_every_point(
    rule: Rule,
    contexts: Mapping[tuple[str, str], Ctx],
    releases: TargetReleases,
    check: Callable[[Ctx], Iterable[Finding]],
) -> list[Finding]:
    """``check`` at every release point, merged per place; each fix kept only where valid everywhere."""
    held: dict[tuple[object, ...], list[tuple[tuple[str, str], Finding]]] = {}
    for point, ctx in contexts.items():
        for f in check(ctx):
            held.setdefault(_place(f), []).append((point, f))
    return _with_fix_range(rule, [_merge(seen, releases) for seen in held.values()], contexts, releases)


def _place(f: Finding) -> tuple[object, ...]:
    return (f.code, f.line, f.column, f.end_line, f.end_column, f.method)


OF_THE_RANGE = " of the target range"  # what a finding's "breaks on ..." is relative to


def _merge(seen: list[tuple[tuple[str, str], Finding]], releases: TargetReleases) -> Finding:
    """One finding for a place, from the newest release where it holds, saying where it holds."""
    _point, newest = seen[-1]
    tf_held = tuple(dict.fromkeys(p[0] for p, _ in seen))
    trl_held = tuple(dict.fromkeys(p[1] for p, _ in seen))
    message = newest.message
    if len(releases.transformers) > 1 and any(p[1] == releases.trl[-1] for p, _ in seen):
        runs = describe_release_runs(tf_held, releases.transformers)
        if len(tf_held) == len(releases.transformers):
            message += f" (on every release of the target range, {runs})"
        else:
            message += f" (breaks on {runs}{OF_THE_RANGE})"
    elif len(releases.trl) > 1 and newest.message.find("trl ") >= 0:
        runs = describe_release_runs(trl_held, releases.trl)
        message += f" (on trl {runs} of the target range)"
    return replace(newest, message=message, releases=tf_held)


def _with_fix_range(
    rule: Rule,
    findings: list[Finding],
    contexts: Mapping[tuple[str, str], ClassContext] | Mapping[tuple[str, str], ModuleContext],
    releases: TargetReleases,
) -> list[Finding]:
    """Keep each fix only if it is valid at every release of the target range."""
    out = []
    for f in findings:
        if f.fix is None:
            out.append(f)
            continue
        broken = [
            tf
            for (tf, trl), ctx in contexts.items()
            if trl == releases.trl[-1] and not rule.fix_is_valid(ctx, f.fix)
        ]
        out.append(_without_fix(f, broken, releases) if broken else f)
    return out


def _without_fix(f: Finding, broken: list[str], releases: TargetReleases) -> Finding:
    """``f`` with its fix dropped, saying on which releases the fixed code would not work."""
    runs = describe_release_runs(tuple(dict.fromkeys(broken)), releases.transformers)
    note = f"no fix: the fixed code would not work on transformers {runs} of the target range"
    return replace(f, fix=None, fix_note=note)


# ----------------------------------------------------------------------------------------------------
# One file at a time: the flake8 plugin, the fixer's re-lint, tests.


def project_root_for(path: str) -> str:
    """The folder an in-memory lint resolves imports from: the nearest folder at or above ``path``
    with a ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git``, else the file's folder."""
    start = os.path.dirname(os.path.abspath(path)) if path not in ("-", "<stdin>") else os.getcwd()
    current = start
    while True:
        if any(
            os.path.exists(os.path.join(current, m))
            for m in ("pyproject.toml", "setup.cfg", "setup.py", ".git")
        ):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def single_file_workspace(path: str, config: LintConfig, model: ProjectModel | None = None) -> Workspace:
    model = model or ProjectModel(
        project_root_for(path), extra_bases=config.trainer_bases, trl_release=target_releases(config).trl[-1]
    )
    return Workspace(model, prefilter.gate_words(config.trainer_bases), tracked=text_needs(config).tracked)


def lint_tree(
    tree: ast.Module,
    source: str,
    path: str,
    config: LintConfig,
    *,
    workspace: Workspace | None = None,
    rules: Iterable[Rule] | None = None,
) -> list[Finding]:
    """Lint one already parsed file against the project around it (bases read on demand)."""
    real = os.path.realpath(path) if os.path.exists(path) else os.path.abspath(path)
    workspace = workspace or single_file_workspace(real, config)
    known = workspace.units.get(real)
    if known is not None and known.source == source:
        unit = known  # read already to resolve another file's bases: same text, same facts
    else:
        summary = summarise(tree, real, source, workspace.words, workspace.tracked)
        unit = FileUnit(real, source, tree, summary)
        workspace.add(unit)
    rules = list(rules) if rules is not None else enabled_rules(config, path)
    findings = lint_unit(unit, workspace, target_releases(config), rules)
    return [replace(f, path=path) for f in findings]


def lint_source(
    source: str,
    path: str,
    config: LintConfig,
    *,
    workspace: Workspace | None = None,
    gate: bool = True,
) -> list[Finding]:
    """Lint one file's text. Raises ``SyntaxError`` for unparsable source (front ends decide)."""
    if gate and not prefilter.worth_linting(source, prefilter.gate_words(config.trainer_bases)):
        return []
    tree = parse_source(source, path)
    return lint_tree(tree, source, path, config, workspace=workspace)
