"""From findings to edits: how to fix each finding, decided from the file and the catalogue.

The rules decide *whether* code is wrong; this module decides *how* to change it, re-reading the
finding's node in the parsed file (by line and shape) and asking the catalogue for the base method at
the target release. Keeping it here leaves the rules' detection code untouched by the fixer. A rule may
also attach an edit to ``Finding.fix`` itself; such an edit is used as is.

Every planner returns ``None`` rather than guess: TW301 only when adding the base method's missing
parameters makes every catalogued call site bind, TW302 only when the call binds after dropping,
TW303 only for reads of ``self.tokenizer``, TW401 only for one unambiguous event.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from functools import lru_cache

from trainwright_lint.config import LintConfig
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import tw301, tw302, tw303, tw401, tw402
from trainwright_lint.fixes.edits import Edit

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@lru_cache(maxsize=8)
def _view(version: str | None):  # type: ignore[no-untyped-def]
    from trainwright.catalog import load_catalog, target_version

    return load_catalog().at(target_version(version))


class FilePlanner:
    """Plans edits for the findings of one parsed file."""

    def __init__(self, code: str, path: str, config: LintConfig) -> None:
        self.tree = ast.parse(code)
        self.path = path
        self.config = config
        self.view = _view(config.transformers_version)
        self._classes = {n.name: n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)}
        self._catalog_cls: dict[str, str] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _class(self, f: Finding) -> ast.ClassDef | None:
        return self._classes.get(f.class_name or "")

    def _function(self, f: Finding) -> FunctionNode | None:
        cls = self._class(f)
        body = cls.body if cls is not None else []
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == f.line:
                return node
        return None

    def catalog_cls(self, cls: ast.ClassDef) -> str:
        """``Seq2SeqTrainer`` or ``Trainer``, resolved through imports and project bases like the engine."""
        if cls.name not in self._catalog_cls:
            from trainwright_lint.engine import flake8_index, module_identity
            from trainwright_lint.resolve import resolve_expr, summarise

            module, is_package, _ = module_identity(self.path)
            summary = summarise(self.tree, module, self.path, is_package)
            index = flake8_index(self.path, self.config)
            index.add(summary)
            bases = [
                b
                for b in (resolve_expr(x, module, summary.imports, set(summary.classes)) for x in cls.bases)
                if b
            ]
            kind = index.classify_bases(bases, own=f"{module}.{cls.name}")
            self._catalog_cls[cls.name] = kind.catalog_cls or "Trainer"
        return self._catalog_cls[cls.name]

    # -- planners --------------------------------------------------------------------------------

    def plan(self, f: Finding) -> Edit | None:
        if f.fix is not None:
            return f.fix  # type: ignore[no-any-return]
        planner = getattr(self, f"_plan_{f.code.lower()}", None)
        if planner is None:
            return None
        try:
            return planner(f)  # type: ignore[no-any-return]
        except (LookupError, ValueError, SyntaxError):
            return None

    def _plan_tw301(self, f: Finding) -> Edit | None:
        fn, cls = self._function(f), self._class(f)
        if fn is None or cls is None:
            return None
        info = self.view.method(fn.name, cls=self.catalog_cls(cls))
        if info is None:
            return None
        own = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        sites = [s for s in info.call_sites if s.caller not in own]
        return tw301.plan(fn, info.signature, sites)

    def _plan_tw302(self, f: Finding) -> Edit | None:
        cls = self._class(f)
        if cls is None:
            return None
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Call)
                and node.lineno == f.line
                and node.col_offset == f.column - 1
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Name)
                and node.func.value.func.id == "super"
            ):
                info = self.view.method(node.func.attr, cls=self.catalog_cls(cls))
                return None if info is None else tw302.plan(node, node.func.attr, info.signature)
        return None

    def _plan_tw303(self, f: Finding) -> Edit | None:
        cls = self._class(f)
        if cls is None or not f.message.startswith("`self.tokenizer`"):
            return None
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and node.lineno == f.line and node.col_offset == f.column - 1:
                edit = tw303.plan(node)  # ``self.tokenizer.pad_token_id`` starts at the same column
                if edit is not None:
                    return edit
        return None

    def _plan_tw402(self, f: Finding) -> Edit | None:
        fn = self._function(f)
        return None if fn is None else tw402.plan(fn)

    def _plan_tw401(self, f: Finding) -> Edit | None:
        from trainwright_lint.rules._events import NEAR_MISSES

        fn, cls = self._function(f), self._class(f)
        if fn is None or cls is None:
            return None
        taken = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return tw401.plan(fn, list(self.view.events), NEAR_MISSES, taken)


def plan_edits(
    code: str, path: str, config: LintConfig, findings: Sequence[Finding]
) -> list[tuple[Finding, Edit]]:
    """``(finding, edit)`` for every finding that has a fix."""
    if not findings:
        return []
    planner = FilePlanner(code, path, config)
    out = []
    for f in findings:
        edit = planner.plan(f)
        if edit is not None:
            out.append((f, edit))
    return out
