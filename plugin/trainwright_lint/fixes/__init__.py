"""Autofixes: libcst rewrites that keep comments and formatting, one module per rule.

Three steps: the rules find the problem; ``plan`` turns each fixable finding into an edit description
(``edits``: plain data, decided from the file and the catalogue); the per-rule modules apply edits
with libcst transformers, one edit type per pass, re-linting between passes until nothing is left.

Safe fixes (applied by ``trainwright fix`` / ``lint --fix``): TW301 add the parameters the Trainer
passes and forward them to ``super()``, TW302 drop the argument the base method rejects, TW303
``self.tokenizer`` -> ``self.processing_class``, TW402 add ``**kwargs``. Unsafe (``--unsafe-fixes``):
TW401 rename a misspelt event to the one real event it means.

Guarantees (tested over fixtures and generated programs): the result parses, a second run changes
nothing, a file that does not parse is left untouched and reported, encoding and newlines are kept.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import MetadataWrapper

from trainwright_lint import noqa
from trainwright_lint.config import LintConfig
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import tw301, tw302, tw303, tw401, tw402
from trainwright_lint.fixes.edits import (
    AddParams,
    AddVarKeyword,
    DropArgs,
    Edit,
    RenameMethod,
    RenameSelfAttribute,
)

# Edit type -> the libcst transformer applying it, in the order passes apply them.
FIXERS: dict[type, Callable[[Sequence], cst.CSTTransformer]] = {
    RenameMethod: tw401.Fixer,
    AddVarKeyword: tw402.Fixer,
    DropArgs: tw302.Fixer,
    RenameSelfAttribute: tw303.Fixer,
    AddParams: tw301.Fixer,
}
# Rule code -> "safe" / "unsafe" (documentation and ``--fix`` help; the edit itself says if it is unsafe).
FIXABLE: dict[str, str] = {
    tw301.CODE: "safe",
    tw302.CODE: "safe",
    tw303.CODE: "safe",
    tw402.CODE: "safe",
    tw401.CODE: "unsafe",
}
MAX_PASSES = 10

Linter = Callable[[str], list[Finding]]


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


def wanted(findings: Sequence[Finding], unsafe: bool) -> list[Finding]:
    return [f for f in findings if isinstance(f.fix, tuple(FIXERS)) and (unsafe or not f.fix.unsafe)]


def apply_edits(module: cst.Module, edits: Sequence[Edit]) -> cst.Module:
    """Apply the edits of the first edit type present (one type per pass: positions stay valid)."""
    for kind, fixer in FIXERS.items():
        group = [e for e in edits if isinstance(e, kind)]
        if group:
            return MetadataWrapper(module).visit(fixer(group))
    return module


def parse(data: bytes, path: str) -> cst.Module:
    try:
        module = cst.parse_module(data)
        ast.parse(module.code, filename=path)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError) as exc:
        raise FixError(f"cannot parse ({exc.__class__.__name__}); left untouched") from None
    return module


def fix_bytes(
    data: bytes,
    path: str,
    lint: Linter,
    *,
    unsafe: bool = False,
    first: Sequence[Finding] | None = None,
) -> FixOutcome:
    """Fix ``data`` (a whole file) to a fixpoint. ``lint(code)`` returns the findings of a source
    text (with their edits); ``first`` are the findings already known for ``data`` (skips one lint).
    Raises ``FixError`` when the file or a fixed version of it does not parse."""
    module = parse(data, path)
    applied: list[Finding] = []
    findings = list(first) if first is not None else lint(module.code)
    for _ in range(MAX_PASSES):
        todo = wanted(findings, unsafe)
        if not todo:
            break
        new = apply_edits(module, [f.fix for f in todo])
        if new.code == module.code:
            break
        kind = next(k for k in FIXERS if any(isinstance(f.fix, k) for f in todo))
        applied += [f for f in todo if isinstance(f.fix, kind)]
        module = parse(new.bytes, path)  # a fix must never produce a file that does not parse
        findings = lint(module.code)
    return FixOutcome(path=path, original=data, fixed=module.bytes, applied=applied, remaining=findings)


def config_linter(path: str, config: LintConfig, index: object | None = None) -> Linter:
    """A ``lint(code)`` for ``path``: the engine with ``# noqa`` honoured, like ``trainwright lint``,
    each fixable finding carrying its planned edit in ``fix``."""
    from trainwright_lint.engine import flake8_index, lint_source
    from trainwright_lint.fixes.plan import plan_edits

    project = index if index is not None else flake8_index(path, config)

    def lint(code: str) -> list[Finding]:
        lines = code.splitlines()
        if noqa.file_is_skipped(lines):
            return []
        findings = noqa.filter_noqa(lint_source(code, path, config, index=project), lines)  # type: ignore[arg-type]
        fixable = [f for f in findings if f.code in FIXABLE]
        planned = {id(f): edit for f, edit in plan_edits(code, path, config, fixable)}
        return [replace(f, fix=planned[id(f)]) if id(f) in planned else f for f in findings]

    return lint


def has_fixable(findings: Sequence[Finding], unsafe: bool) -> bool:
    """Whether any finding is of a rule with a fix (of the allowed kind): worth running the fixer."""
    return any(f.code in FIXABLE and (unsafe or FIXABLE[f.code] == "safe") for f in findings)


__all__ = [
    "FIXABLE",
    "FIXERS",
    "FixError",
    "FixOutcome",
    "apply_edits",
    "config_linter",
    "fix_bytes",
    "wanted",
]
