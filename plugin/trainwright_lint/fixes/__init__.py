"""Autofixes: the pass loop that applies the rules' fixes with libcst (keeping comments and formatting).

A fixable rule owns its fix (``rules/twNNN_<name>.py``): the edit type it attaches to its finding
(plain data, already checked valid on every release of the target range by the rule's
``fix_is_valid``), the planner that builds it, and, in the companion module its ``fix_module`` names,
the libcst ``Fixer`` that applies it. This package knows no rule: it finds an edit's rule from the
module that defines the edit's type, imports that rule's ``fix_module`` when a fix runs (never at lint
time), and applies one rule's edits per pass, in the rules' ``fix_pass`` order, re-linting between
passes until nothing is left. File I/O is in ``fixes.fileio``; the lint-then-fix loop over a project
lives in ``trainwright_lint.driver``.

Which rules have a fix, and whether it is safe (applied by ``trainwright fix`` / ``lint --fix``) or unsafe
(only with ``--unsafe-fixes``), each rule declares (``Rule.fix_applicability``, ``fix_title``):
``trainwright fix --help`` and ``docs/rules/index.md`` list them from the registry.

Guarantees (tested over fixtures and generated programs): the result parses, a second run changes
nothing, a file that does not parse is left untouched and reported, encoding and newlines are kept.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from typing import Protocol

import libcst as cst
from libcst.metadata import MetadataWrapper

from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import segment
from trainwright_lint.rules import Rule, fixing_rules
from trainwright_lint.sourcefile import text_digest

Fixer = Callable[[Sequence[Edit]], cst.CSTTransformer]

MAX_PASSES = 10


class Linter(Protocol):
    """``lint(text, tree)``: the findings of a source text, given its ``ast`` tree (already parsed by the
    fixer, which must check that every fixed text parses anyway: the linter does not parse it a second
    time). Without a tree (the server's whole lint) the linter parses the text itself."""

    def __call__(self, code: str, tree: ast.Module | None = None, /) -> list[Finding]: ...


class FixError(Exception):
    """A file the fixer could not handle (reported as TW000; the file is left untouched)."""


@dataclass
class FixOutcome:
    path: str
    original: bytes
    fixed: bytes
    applied: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    remaining: list[Finding] = field(default_factory=list)  # findings left after fixing

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def rule_of(edit: object) -> type[Rule] | None:
    """The rule that plans and applies ``edit`` (None: not an edit the fixer applies)."""
    if not isinstance(edit, Edit):
        return None
    # The rule that owns the edit's module (an edit type is defined in its rule's module).
    module = type(edit).__module__
    return next((r for r in fixing_rules() if r.__module__ == module), None)


def fixer_of(rule: type[Rule]) -> Fixer:
    """``rule``'s libcst transformer class, imported from its ``fix_module`` on first use."""
    assert rule.fix_module is not None, rule.code
    return import_module(rule.fix_module).Fixer  # type: ignore[no-any-return]


def wanted(findings: Sequence[Finding], unsafe: bool) -> list[Finding]:
    return [f for f in findings if rule_of(f.fix) is not None and (unsafe or not f.fix.unsafe)]


def _first_pass(edits: Sequence[object]) -> type[Rule] | None:
    """The rule whose edits the next pass applies: the lowest ``fix_pass`` among ``edits``'."""
    present = {rule_of(e) for e in edits}
    return next((r for r in fixing_rules() if r in present), None)


def apply_edits(module: cst.Module, edits: Sequence[Edit]) -> cst.Module:
    """Apply the edits of the first rule (in pass order) present (one rule per pass: positions stay valid)."""
    rule = _first_pass(edits)
    if rule is None:
        return module
    group = [e for e in edits if rule_of(e) is rule]
    return MetadataWrapper(module).visit(fixer_of(rule)(group))


def parse(data: bytes, path: str) -> cst.Module:
    try:
        module = cst.parse_module(data)
        ast.parse(module.code, filename=path)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        raise FixError(f"cannot parse ({exc.__class__.__name__}); left untouched") from None
    return module


#: libcst's visitors take about six frames per level of nesting: 140 nested brackets (Python's
#: parser allows 199) went past the default limit of 1,000, and ``fix`` refused a file that ``lint``
#: had offered a fix for. Python 3.11 frames live on the heap, so the higher limit costs no C stack.
FIX_RECURSION_LIMIT = 20_000


@contextmanager
def _deep_enough() -> Iterator[None]:
    """The recursion limit raised to :data:`FIX_RECURSION_LIMIT` while libcst works, then restored."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, FIX_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def fix_bytes(
    data: bytes,
    path: str,
    lint: Linter,
    *,
    unsafe: bool = False,
    first: tuple[bytes, Sequence[Finding]] | None = None,
    prior: tuple[str, ast.Module] | None = None,
) -> FixOutcome:
    """Fix ``data`` (a whole file) to a fixpoint. ``lint(code, tree)`` returns the findings of a source
    text (with their edits); ``first`` is findings already known and the ``text_digest`` of the text
    they were computed from: used (skipping one lint) only when ``data`` decodes to that very text.
    Their edits are addressed by line and column, so on any other text (the file was saved while the
    project was linted) they would rewrite whatever now stands there: that text is linted afresh.
    ``prior`` is a text the lint already parsed and its tree, used when ``data`` still holds that
    text (skips one parse). Raises ``FixError`` when the file or a fixed version of it does not parse.

    Cost stays proportional to what is edited: libcst only sees the statements holding the edits
    (``segment``). Each fixed text is parsed once with ``ast``: that parse proves it valid, is the tree
    the next lint runs on, and locates the next pass's segments. One whole-file tree is alive at a time
    (memory stays that of one lint)."""
    try:
        source = segment.decode(data)
        text = source.text
        tree: ast.Module | None = None  # the tree of ``text``, once parsed
        if prior is not None and prior[0] == text:
            tree = prior[1]
        if first is not None and first[0] == text_digest(text):
            findings = list(first[1])
        else:
            tree = tree if tree is not None else segment.parse_tree(text, path)
            findings = lint(text, tree)
        applied: list[Finding] = []
        reported = list(findings)  # what the user was shown: the summary counts these
        for _ in range(MAX_PASSES):
            todo = wanted(findings, unsafe)
            if not todo:
                break
            rule = _first_pass([f.fix for f in todo])
            group = [f for f in todo if rule_of(f.fix) is rule]
            if tree is None:
                tree = segment.parse_tree(text, path)
            with _deep_enough():
                new = segment.rewrite(text, tree, [f.fix for f in group], apply_edits, source.newline)
            if new == text:
                break
            tree = None  # dropped before the new text's tree is built
            tree = segment.parse_tree(new, path)  # a fix must never produce a file that does not parse
            applied += group
            text = new
            findings = lint(text, tree)
        if tree is None:
            segment.parse_tree(text, path)  # an unparsable file is reported even with nothing to fix
        applied = fixed_findings(reported, applied, findings)
        fixed = data if text == source.text else source.encode(text)
    except segment.SegmentError as exc:
        raise FixError(f"{exc}; left untouched") from None
    return FixOutcome(path=path, original=data, fixed=fixed, applied=applied, remaining=findings)


def _place(f: Finding) -> tuple[object, ...]:
    return (f.code, f.class_name, f.method, f.line, f.column)


def fixed_findings(
    reported: Sequence[Finding], applied: Sequence[Finding], remaining: Sequence[Finding]
) -> list[Finding]:
    """The findings first reported whose fix was applied and that are gone at the end, each once.

    Counting fixes per pass over-counted: on a range a fix can take two passes (TW301 adds
    `start_time`, then TW302 drops it from the `super()` call on the releases that reject it), and a
    pass can fix a finding the previous pass created, which the user was never shown."""
    fixed = {_place(f) for f in applied} - {_place(f) for f in remaining}
    return [f for f in reported if _place(f) in fixed]


def has_fixable(findings: Sequence[Finding], unsafe: bool) -> bool:
    """Whether any finding carries a fix of the allowed kind: worth running the fixer on its file."""
    return bool(wanted(findings, unsafe))


__all__ = [
    "FixError",
    "FixOutcome",
    "apply_edits",
    "fix_bytes",
    "fixer_of",
    "has_fixable",
    "rule_of",
    "wanted",
]
