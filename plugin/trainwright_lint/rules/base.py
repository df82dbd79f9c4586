"""The rule interface: one rule = one class with a code, a name, a message template, a docstring
that is its documentation page, VALID/INVALID examples the test-suite runs (an INVALID example
carries the code its fix produces, Fixit style), and the fix it offers with its safety.

A rule is a predicate over facts computed once and shared: the ``ClassContext`` gives it the class
(its summary, node and resolved MRO from the project model), the catalogue at one release of the
target range, and the shared analyses (a method's effects, its ``super()`` calls). Rules do not walk
trees themselves; a rule that reads the release (``release_facts``) is judged once per run of releases
with equal catalogue facts and the engine merges what holds where.

The rule class is the only owner of what it declares: its release dependence, its fix (safety, module,
pass, one-line title), whether ``fix --suggest`` moves its code into a callback. Every list of codes the
front ends, the fixer, the target resolution and the generated docs use is derived from the registry
(``rules/__init__.py``), never kept by hand (``tests/lint/test_rule_declarations.py``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from trainwright_lint.analysis import effects as effects_mod
from trainwright_lint.analysis import release_facts
from trainwright_lint.analysis.facts import EFFECTS, METHODS, STATEMENTS, SUPER_CALLS, FactStore, SharedFact
from trainwright_lint.analysis.observing import MethodFacts, Observation, observe
from trainwright_lint.analysis.unit import FileUnit, nodes_on_lines, own_statements
from trainwright_lint.analysis.workspace import MethodRef, Workspace
from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import CALLBACK, MIXIN, TRAINER, ClassInfo
from trainwright_lint.project.summary import ClassSummary, MethodSummary
from trainwright_lint.rules.docs import render_rule_page
from trainwright_lint.syntax import FUNCTION_TYPES, FunctionNode, super_method
from trainwright_lint.textscan import LiteralScan

if TYPE_CHECKING:
    from trainwright.catalog import Catalog, MethodInfo, VersionView

T = TypeVar("T")

SAFE = "safe"
UNSAFE = "unsafe"

# What a release of the target range changes about a rule's verdict (``Rule.release_facts``): the one
# notion of "depends on the release" that the engine (judged once, or per run of equal catalogue facts),
# the target resolution (what stays on for a project pinned below the catalogue) and the rule's page
# (which options apply) all read.
EVERY_RELEASE = "every release"  # the same verdict on every release: judged once, at the newest
# A release's callback events and control flags: judged per run of equal events; on for a project
# pinned below the catalogue (checked against the oldest catalogued release: callbacks hold there too).
CALLBACK_EVENTS = "callback events"
# What a release's Trainer (or TRL trainer) defines, passes or removed: judged per run of equal facts;
# off for a project pinned below the catalogue, whose Trainer the catalogue does not know.
TRAINER_API = "trainer api"
RELEASE_FACTS = (EVERY_RELEASE, CALLBACK_EVENTS, TRAINER_API)

# How ``trainwright fix --suggest`` turns a finding into a callback (``Rule.suggestion``).
MOVE_STATEMENTS = "statements"  # the statements the finding names (``moved``), else the flagged block
MOVE_WRAPPER = "wrapper"  # without named statements: all but the ``super()`` call and the return


@dataclass(frozen=True)
class Example:
    """A code sample for a rule. ``version`` is the target transformers release (None: newest);
    ``line`` is the line an INVALID example must be reported on (None: any line); ``fixed`` is the
    code the rule's fix turns an INVALID example into (None: the rule has no fix for it)."""

    code: str
    version: str | None = None
    line: int | None = None
    fixed: str | None = None


_SUPER = LiteralScan("super", r"\s*\(")
# The reference callbacks ship with the `train` extra, which needs transformers 5.x: advice naming one
# on a target range with 4.x releases says so, or it would point a 4.x project at code it cannot import.
CALLBACKS_NEED_MAJOR = 5
_REFERENCE = re.compile(r"\(reference: (trainwright\.callbacks\.\w+)\)")


def _major(release: str) -> int:
    head = release.split(".", 1)[0]
    return int(head) if head.isdigit() else CALLBACKS_NEED_MAJOR


def _needs_newer(match: re.Match[str]) -> str:
    return f"(reference: {match[1]}, which needs transformers>={CALLBACKS_NEED_MAJOR}: on 4.x copy its event code)"


@dataclass
class ClassContext:
    """Everything a class rule may ask about one class, with the expensive facts (effects, super()
    calls) computed on first use and shared by the rules that follow."""

    key: str
    info: ClassInfo
    role: str  # TRAINER, MIXIN or CALLBACK
    unit: FileUnit
    cls: ClassSummary
    node: ast.ClassDef
    workspace: Workspace
    catalog: Catalog | None
    view: VersionView | None  # transformers at the release being evaluated
    releases: tuple[str, ...] = ()  # every transformers release of the target range
    users: tuple[str, ...] = ()  # MIXIN: the Trainer subclasses that use it
    catalog_cls: str | None = None  # "Trainer"/"Seq2SeqTrainer" (a mixin: its users')
    library_cls: str | None = None  # the TRL class in the MRO ("GRPOTrainer")
    library_catalog: Catalog | None = None
    library_view: VersionView | None = None
    library_releases: tuple[str, ...] = ()
    # Facts about this class that do not depend on the release: one store shared by the contexts of
    # every release point, so each fact is computed once per class (``fact``).
    shared: FactStore = field(default_factory=FactStore, repr=False)

    # -- what the class is ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def path(self) -> str:
        return self.unit.path

    @property
    def is_trainer(self) -> bool:
        return self.role in (TRAINER, MIXIN)

    @property
    def is_callback(self) -> bool:
        return self.role == CALLBACK

    @property
    def third_party(self) -> bool:
        return self.info.third_party or any(self.workspace.model.info(u).third_party for u in self.users)

    @property
    def library(self) -> str | None:
        return "trl" if self.library_cls else None

    @property
    def target(self) -> str | None:
        return self.view.version if self.view is not None else None

    @property
    def library_label(self) -> str:
        """``trl.GRPOTrainer (trl 1.16.0)``: the class and release a library method belongs to."""
        version = self.library_view.version if self.library_view is not None else "?"
        return f"trl.{self.library_cls} (trl {version})"

    # -- methods ---------------------------------------------------------------------------------------

    def fact(self, fact: SharedFact[T], key: Hashable, compute: Callable[[], T]) -> T:
        """A release-independent fact about this class (``fact`` of scope ``CLASS``, ``key`` within
        the class), computed on first use and shared by every release point."""
        return self.shared.get(fact, key, compute)

    def methods(self) -> list[tuple[MethodSummary, FunctionNode]]:
        """The class's own methods, in source order, with their nodes."""

        def compute() -> list[tuple[MethodSummary, FunctionNode]]:
            by_line = {m.line: m for m in self.cls.methods.values()}
            return [
                (by_line[s.lineno], s)
                for s in self.node.body
                if isinstance(s, FUNCTION_TYPES) and by_line.get(s.lineno) is not None
            ]

        return self.fact(METHODS, None, compute)

    def own_method_names(self) -> set[str]:
        return set(self.cls.methods)

    def trainer_method(self, name: str) -> MethodInfo | None:
        """The catalogued Trainer method ``name`` at the release being evaluated."""
        if self.view is None or self.catalog_cls is None:
            return None
        return self.view.method(name, cls=self.catalog_cls)

    def ever_trainer_method(self, name: str) -> bool:
        if self.catalog is None or self.catalog_cls is None:
            return False
        return self.catalog.ever_defined(name, cls=self.catalog_cls)

    def library_method(self, name: str) -> MethodInfo | None:
        if self.library_view is None or self.library_cls is None:
            return None
        if self.library_cls not in self.library_view.classes:
            return None
        return self.library_view.method(name, cls=self.library_cls)

    def ever_library_method(self, name: str) -> bool:
        if self.library_catalog is None or self.library_cls is None:
            return False
        return self.library_catalog.ever_defined(name, cls=self.library_cls)

    def upstream_method(self, name: str) -> bool:
        """``name`` is a method transformers' Trainer or the TRL base defines (in some release):
        an override, not the project's own helper."""
        return self.ever_trainer_method(name) or self.ever_library_method(name)

    def upstream_owners(self, name: str) -> list[tuple[Catalog, str]]:
        """The catalogued library classes of the MRO that define ``name``: whose copies count as
        upstream code."""
        out: list[tuple[Catalog, str]] = []
        if self.catalog is not None and self.catalog_cls is not None and self.ever_trainer_method(name):
            out.append((self.catalog, self.catalog_cls))
        if (
            self.library_catalog is not None
            and self.library_cls is not None
            and self.ever_library_method(name)
        ):
            out.append((self.library_catalog, self.library_cls))
        return out

    def project_methods(self) -> set[str]:
        """Methods defined by the project classes of the MRO after this one (and for a mixin, by
        its users' MROs): a call site inside one of those runs the project's code, not upstream's."""
        out: set[str] = set()
        keys = list(self.workspace.project_mro(self.key)[1:])
        for user in self.users:
            keys += self.workspace.project_mro(user)
        for key in keys:
            found = self.workspace.class_of(key)
            if found is not None and key != self.key:
                out.update(found[1].methods)
        return out

    # -- shared facts ------------------------------------------------------------------------------

    def effects(self, method: MethodSummary, node: FunctionNode) -> effects_mod.MethodEffects:
        ws = self.workspace
        key = self.key

        def compute() -> effects_mod.MethodEffects:
            return effects_mod.analyse(
                node,
                attr_is_data=lambda attr: ws.attribute_is_data(key, attr, method.name),
                clock_attrs=ws.clock_attributes(key),
                counters=ws.counters(key),
            )

        return self.unit.facts.get(EFFECTS, (self.cls.qualname, method.line), compute)  # type: ignore[no-any-return]

    def super_calls(self, method: MethodSummary, node: FunctionNode) -> list[ast.Call]:
        """Every ``super().m(...)`` call in the method, found on the lines that say ``super(``."""

        def compute() -> list[ast.Call]:
            lines = self.unit.lines_matching(method.line, method.end_line, _SUPER)
            found = nodes_on_lines(node, lines, lambda n: super_method(n) is not None)
            # ``found`` holds only the calls ``want`` accepted (typed ``ast.AST`` by the walk)
            return sorted(found, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[arg-type]

        return self.unit.facts.get(SUPER_CALLS, (self.cls.qualname, method.line), compute)

    def statements(self, method: MethodSummary, node: FunctionNode) -> list[ast.stmt]:
        """The method's own statements, nested blocks included (``analysis.unit.own_statements``)."""
        return self.unit.facts.get(STATEMENTS, (self.cls.qualname, method.line), lambda: own_statements(node))

    def observation(self, method: MethodSummary, node: FunctionNode) -> Observation:
        """What of ``method`` a callback could do (``analysis.observing``; TW201, TW202, TW203)."""
        facts = MethodFacts(
            unit=self.unit,
            qualname=self.cls.qualname,
            overrides_upstream=self.upstream_method(method.name),
            effects=lambda: self.effects(method, node),
            owners=lambda: self.upstream_owners(method.name),
        )
        return observe(facts, method, node)

    def method_ref(self, name: str) -> MethodRef | None:
        return self.workspace.method(self.key, name)


@dataclass
class ModuleContext:
    """What a module-scoped rule sees: one file, the project model, and the catalogues at one release
    point of the target range (call sites such as ``Trainer(tokenizer=tok)`` live outside classes)."""

    unit: FileUnit
    workspace: Workspace
    catalog: Catalog
    view: VersionView
    library_catalog: Catalog
    library_view: VersionView
    releases: tuple[str, ...] = ()
    library_releases: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return self.unit.path


# The catalogue facts a candidate reads (``analysis.release_facts``), where the rules import them from.
Fact = release_facts.Fact
EVENTS = release_facts.EVENTS
trainer_fact = release_facts.trainer_fact
library_fact = release_facts.library_fact
library_class_fact = release_facts.library_class_fact


@dataclass(frozen=True)
class Candidate:
    """A finding a rule may report: ``at`` judges it at one release point (None: it does not hold
    there) reading only the catalogue facts in ``reads``, so that it answers alike wherever those
    facts are the same. No ``reads``: the judgement does not depend on the release. Rules build
    ``at`` as a lambda binding the loop's values as defaults (``lambda c, fn=fn: ...``), which mypy
    cannot type: those lines carry ``type: ignore[misc]``."""

    at: Callable[[ClassContext], Finding | None]
    reads: tuple[Fact, ...] = ()


# Why a finding of a ``moves_only`` rule (TW2xx: "no move, no finding") carries no move, when the planner
# named no reason of its own: ``lint --preview`` says it as the finding's note, and ``fix --suggest`` as the
# reason it shows no preview (``suggest.withheld``). Without it, the preview's "move it to a
# TrainerCallback on ..." read as advice the tool had checked.
NO_MOVE = (
    "no move is written: no callback event runs this code at the same moment with the values it reads "
    "(the rule page's 'By hand' section says what to weigh)"
)


class Rule:
    """Base class. Subclasses set the class attributes and implement ``check`` (class scope) or
    ``check_module`` (module scope)."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]  # str.format template; the placeholders each rule documents
    roles: ClassVar[frozenset[str]] = frozenset({TRAINER, MIXIN})
    # What a release changes about the verdict (``EVERY_RELEASE``, ``CALLBACK_EVENTS``, ``TRAINER_API``).
    # A class rule that reads the release implements ``candidates``; one that does not, ``check``.
    release_facts: ClassVar[str] = TRAINER_API
    # "class": ``check`` runs once per class of a role in ``roles``; "module": ``check_module`` once per file.
    scope: ClassVar[str] = "class"
    # The fix this rule attaches to its findings: "safe", "unsafe" (behaviour changes: only with
    # --unsafe-fixes) or None (no automatic fix).
    fix_applicability: ClassVar[str | None] = None
    # Where the rule's fix is applied: the dotted name of its companion module (``twNNN_<name>_fix``,
    # a libcst ``Fixer`` transformer built from the rule's edits). The rule's module holds the rest of
    # the fix: its edit type, its planner and ``fix_is_valid``. Only ``fixes/`` imports the companion
    # (with importlib, by this name), so a lint never loads libcst.
    fix_module: ClassVar[str | None] = None
    # Fix passes apply one rule's edits at a time (positions stay valid), lowest first: renaming a
    # method comes before edits that find it by name, and adding parameters comes last.
    fix_pass: ClassVar[int] = 0
    # What the fix does, as the ``fix`` command's help and the rules index list it ("add `**kwargs`").
    fix_title: ClassVar[str] = ""
    # How ``trainwright fix --suggest`` moves the flagged code into a callback (``MOVE_STATEMENTS``,
    # ``MOVE_WRAPPER``), or None: the rule's findings get no suggestion.
    suggestion: ClassVar[str | None] = None
    # Off unless ``--preview``: precision on the blind test split under 0.90 (docs/lint-accuracy.md).
    preview: ClassVar[bool] = False
    # A finding of this rule is a proposed move (TW201/TW202, issue 33: "no move, no finding"): one
    # whose move the planner refused is reported only with ``--preview``, like a preview rule, since
    # on the blind test split those findings are right 5 times in 6 (docs/lint-accuracy.md).
    moves_only: ClassVar[bool] = False
    # Preview variants (issue 33): overridden method -> the kinds of code (``Finding.kind``) on which this
    # rule's precision on the blind test split is under 0.90, or not yet measured
    # (``scripts/ecosystem_check.py``'s "TW2xx variants" table, keyed the same way); findings there are
    # reported only with ``--preview``, like a preview rule's.
    preview_variants: ClassVar[dict[str, frozenset[str]]] = {}
    unmoved_too: bool = False  # set per run from ``--preview`` (``engine.enabled_rules``)

    def reported(self, findings: list[Finding]) -> list[Finding]:
        """``findings`` as this run reports them: without the unmoved ones of a ``moves_only`` rule and
        those of its preview variants (``preview_variants``) unless preview is on."""
        if self.unmoved_too:
            return findings
        if self.moves_only:
            findings = [f for f in findings if f.fix is not None]
        return [f for f in findings if f.kind not in self.preview_variants.get(f.method or "", ())]

    # What the runner reads for this rule beyond the files with target classes (the runner knows no
    # rule, only these declarations): instance attributes whose stores (``x.tokenizer = ...``) it
    # scans in every file, and a text gate for files without a target class that are linted all the
    # same (training scripts that build a Trainer).
    TRACKED_ATTRIBUTES: ClassVar[tuple[str, ...]] = ()
    # The shared facts the rule reads (``analysis.facts``; the facts those read follow from their
    # ``needs``), as Fixit's rules declare their metadata providers: a test runs each rule alone over
    # its examples and fixtures and checks that it reads exactly what it declares.
    FACTS: ClassVar[tuple[SharedFact[Any], ...]] = ()
    script_gate: ClassVar[staticmethod[[str], bool] | None] = None
    # "warning" for a finding that breaks or misplaces code; "note" for a lower-severity finding (TW305:
    # a contract break no library code triggers). SARIF ``level`` and GitHub annotation command.
    severity: ClassVar[str] = "warning"
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()
    FIX: ClassVar[str] = ""  # how to fix it by hand (Markdown)
    USE_INSTEAD: ClassVar[str] = ""  # the code to write instead, when no INVALID example has a ``fixed``
    OPTIONS: ClassVar[tuple[str, ...]] = ()  # [tool.trainwright] keys that change what it reports
    EVIDENCE: ClassVar[tuple[str, ...]] = ()  # issues/PRs where this broke real projects

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        """The findings at ``ctx``'s release: by default, the candidates that hold there."""
        for candidate in self.candidates(ctx):
            found = candidate.at(ctx)
            if found is not None:
                yield found

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:  # pragma: no cover - interface
        """What the rule may report on the class, judged per release by the engine (see the module
        docstring); a rule implements this or ``check``."""
        raise NotImplementedError

    @classmethod
    def judges_candidates(cls) -> bool:
        return cls.candidates is not Rule.candidates

    @classmethod
    def reads_release(cls) -> bool:
        """The verdict may differ between releases: judged per run of equal facts, not once."""
        return cls.release_facts != EVERY_RELEASE

    @classmethod
    def off_below_catalogue(cls) -> bool:
        """Off for a project pinned below the catalogue: it would judge a Trainer the project does not run."""
        return cls.release_facts == TRAINER_API

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A declaration that contradicts itself is an error where the rule is defined, not a wrong lint."""
        super().__init_subclass__(**kwargs)
        if not hasattr(cls, "code"):
            return  # an abstract helper base
        problems = declaration_problems(cls)
        if problems:
            raise TypeError(f"{cls.code} ({cls.__name__}): " + "; ".join(problems))

    def check_module(self, ctx: ModuleContext) -> Iterator[Finding]:  # pragma: no cover - interface
        raise NotImplementedError

    def wants_module(self, unit: FileUnit) -> bool:
        """Whether ``check_module`` may find anything in ``unit``: a module rule's cheap gate on a fact
        of the file, so that the engine skips the rule (and its contexts) elsewhere."""
        return True

    def fix_is_valid(self, ctx: ClassContext | ModuleContext, edit: Edit) -> bool:
        """Whether ``edit`` gives valid code at ``ctx``'s release. The engine applies a fix only if
        it is valid at every release of the target range. It passes a class rule a ``ClassContext``
        and a module rule a ``ModuleContext``: overrides narrow ``ctx`` (``type: ignore[override]``)."""
        return True

    # -- reporting -------------------------------------------------------------------------------

    def report(
        self,
        ctx: ClassContext | ModuleContext,
        node: ast.AST,
        message: str,
        *,
        method: str | None = None,
        fix: Edit | None = None,
        class_name: str | None = None,
        moved: tuple[tuple[int, int], ...] = (),
        fix_note: str = "",
        kind: str = "",
    ) -> Finding:
        line, col, end_line, end_col, noqa = node_span(node, ctx.unit)
        if self.moves_only and fix is None and not fix_note:
            fix_note = NO_MOVE  # a finding ``--preview`` shows without a move says why it advises none
        if any(_major(r) < CALLBACKS_NEED_MAJOR for r in ctx.releases):
            message = _REFERENCE.sub(_needs_newer, message)
        return Finding(
            code=self.code,
            name=self.name,
            message=message,
            path=ctx.unit.path,
            line=line,
            column=col,
            end_line=end_line,
            end_column=end_col,
            class_name=ctx.name if isinstance(ctx, ClassContext) else class_name,
            method=method,
            noqa_lines=noqa,
            fix=fix,
            fix_note=fix_note,
            moved=moved,
            kind=kind,
        )

    # -- documentation ---------------------------------------------------------------------------

    @classmethod
    def explain(cls) -> str:
        """The rule's documentation page as Markdown (``trainwright explain TW201``)."""
        return render_rule_page(cls)


def declaration_problems(rule: type[Rule]) -> list[str]:
    """What is inconsistent in ``rule``'s declarations (empty: nothing)."""
    out = []
    if rule.release_facts not in RELEASE_FACTS:
        out.append(f"release_facts must be one of {RELEASE_FACTS}, not {rule.release_facts!r}")
    if rule.scope == "class" and rule.reads_release() != rule.judges_candidates():
        out.append(
            "a class rule that reads the release implements `candidates` (each names the catalogue facts it "
            "reads); one that does not (release_facts = EVERY_RELEASE) implements `check`"
        )
    if (rule.fix_applicability is None) != (rule.fix_module is None):
        out.append("fix_applicability and fix_module go together")
    if rule.fix_applicability not in (None, SAFE, UNSAFE):
        out.append(f"fix_applicability must be {SAFE!r}, {UNSAFE!r} or None")
    if rule.fix_applicability is not None and not rule.fix_title:
        out.append("a fixable rule says what its fix does (fix_title)")
    if rule.suggestion not in (None, MOVE_STATEMENTS, MOVE_WRAPPER):
        out.append(f"suggestion must be {MOVE_STATEMENTS!r}, {MOVE_WRAPPER!r} or None")
    return out


_HEADER_END = re.compile(r":\s*(#.*)?$")


def node_span(node: ast.AST, unit: FileUnit) -> tuple[int, int, int, int, tuple[int, int]]:
    """1-based (line, column, end_line, end_column) to report, columns in characters, and the lines
    whose ``# noqa`` counts.

    Definitions are reported on the ``def``/``class`` keyword, spanning the name, and their ``noqa``
    lines are the whole header (flake8 treats a multi-line header as one logical line).
    """
    lines = unit.lines
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        line = node.lineno
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        col = unit.column(line, node.col_offset)
        start_name = text.find(node.name, col - 1)
        end_col = (start_name + len(node.name) + 1) if start_name >= 0 else col + len(node.name)
        body_line = node.body[0].lineno if node.body else line
        header_end = line
        for candidate in range(line, max(line, body_line - 1) + 1):
            header_end = candidate
            code = lines[candidate - 1] if candidate <= len(lines) else ""
            if _HEADER_END.search(code):
                break
        return line, col, line, end_col, (line, header_end)
    line = getattr(node, "lineno", 1)
    col = unit.column(line, getattr(node, "col_offset", 0))
    end_line = getattr(node, "end_lineno", None) or line
    end_offset = getattr(node, "end_col_offset", None)
    end_col = unit.column(end_line, end_offset) if end_offset is not None else col
    return line, col, end_line, end_col, (line, end_line)


def describe_release_runs(releases: tuple[str, ...], within: tuple[str, ...]) -> str:
    """``4.46.0–4.57.6, 5.3.0–5.24.0``: runs of consecutive releases of ``within``."""
    index = {v: i for i, v in enumerate(within)}
    runs: list[list[str]] = []
    last = -2
    for v in sorted(releases, key=lambda r: index.get(r, -1)):
        i = index.get(v, -1)
        if runs and i == last + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
        last = i
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)
