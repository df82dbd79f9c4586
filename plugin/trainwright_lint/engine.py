"""The lint engine: one pure function from (source, path, config) to findings, plus helpers the
front ends share.

Pipeline per file: textual pre-filter -> ``ast`` parse (free in flake8 mode: flake8 hands us its
tree) -> module summary -> classify each class through the project index -> run the rules whose role
matches. Why ``ast`` and not libcst for detection: every rule is syntactic, ``ast`` carries exact
positions for free, and it is ~10x cheaper to parse than libcst (~37x once libcst positions are
resolved), which is what keeps the flake8 plugin within its overhead budget. libcst stays reserved
for the autofix pass (a later issue), which will re-parse only files that have a fixable finding.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Sequence
from functools import lru_cache

from trainwright_lint import prefilter
from trainwright_lint.config import LintConfig
from trainwright_lint.finding import Finding
from trainwright_lint.resolve import (
    CALLBACK,
    ModuleSummary,
    ProjectIndex,
    module_name_for,
    resolve_expr,
    sibling_loader,
    summarise,
)
from trainwright_lint.rules import RULES
from trainwright_lint.rules._ast import clear_body_cache
from trainwright_lint.rules.base import ClassContext, ModuleContext, Rule


@lru_cache(maxsize=1)
def _catalog():  # type: ignore[no-untyped-def]
    from trainwright.catalog import load_catalog

    return load_catalog()


@lru_cache(maxsize=16)
def library_view(library: str, cls: str, explicit: str | None):  # type: ignore[no-untyped-def]
    """(catalogue, view) of a third-party library with a catalogue (TRL) when it knows ``cls``,
    else (None, None). Target: option/config > installed (package metadata) > newest catalogued."""
    from trainwright.catalog import load_catalog, target_version

    try:
        catalog = load_catalog(library)
    except ValueError:
        return None, None
    if cls not in catalog.class_names():
        return None, None
    view = catalog.at(target_version(explicit, library=library))
    return catalog, (view if cls in view.classes else None)


@lru_cache(maxsize=16)
def resolve_target(explicit: str | None) -> str:
    """option/config > installed transformers (package metadata only) > newest catalogued release."""
    from trainwright.catalog import target_version

    return target_version(explicit)


def enabled_rules(config: LintConfig, path: str | None = None) -> list[Rule]:
    return [cls() for code, cls in sorted(RULES.items()) if config.code_enabled(code, path)]


def module_identity(path: str) -> tuple[str, bool, str]:
    if path in ("-", "stdin", "<stdin>") or not os.path.exists(path):
        return "__main__", False, os.getcwd()
    return module_name_for(path)


def flake8_index(path: str, config: LintConfig) -> ProjectIndex:
    """An index that reads sibling modules of ``path``'s package on demand (one file at a time)."""
    module, _, root = module_identity(path)
    top = module.split(".", 1)[0]
    return ProjectIndex(loader=sibling_loader(root, top), extra_bases=config.trainer_bases)


def _is_callback_handler(node: ast.ClassDef, bases: list[str]) -> bool:
    """``CallbackHandler`` (a TrainerCallback subclass) dispatches events: its return values are the
    control object by design, so the callback contract rules do not apply to it or its subclasses."""
    if any(b.rsplit(".", 1)[-1] == "CallbackHandler" for b in bases):
        return True
    return any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "call_event" for s in node.body
    )


def lint_tree(
    tree: ast.Module,
    source_lines: Sequence[str],
    path: str,
    config: LintConfig,
    *,
    index: ProjectIndex | None = None,
    summary: ModuleSummary | None = None,
    rules: Iterable[Rule] | None = None,
) -> list[Finding]:
    """Run the rules over an already parsed module (no pre-filter)."""
    if summary is None:
        module, is_package, _ = module_identity(path)
        summary = summarise(tree, module, path, is_package, source="\n".join(source_lines))
    if index is None:
        index = flake8_index(path, config)
    if summary.module not in index.modules:
        index.add(summary)
    rules = list(rules) if rules is not None else enabled_rules(config, path)
    if not rules:
        return []
    catalog = view = None
    mctx = ModuleContext(path=path, tree=tree, lines=[line.rstrip("\r\n") for line in source_lines])
    local_names = set(summary.classes)
    findings: list[Finding] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [
            b
            for b in (resolve_expr(x, summary.module, summary.imports, local_names) for x in node.bases)
            if b
        ]
        own = f"{summary.module}.{node.name}"
        kind = index.classify_bases(bases, own=own)
        if kind.role is None and summary.classes.get(node.name) is not None:
            kind = index.class_kind(summary, summary.classes[node.name])
        if kind.role is None or (kind.role == CALLBACK and _is_callback_handler(node, bases)):
            continue
        applicable = [r for r in rules if kind.role in r.roles]
        if not applicable:
            continue
        if catalog is None:
            catalog = _catalog()
            view = catalog.at(resolve_target(config.transformers_version))
        project_methods, sets_tok = index.project_methods(kind.chain or (own,))
        ctx = ClassContext(
            node=node,
            role=kind.role,
            catalog_cls=kind.catalog_cls,
            third_party=kind.third_party,
            module=mctx,
            catalog=catalog,
            view=view,
            project_methods=project_methods,
            project_sets_tokenizer=sets_tok,
        )
        if kind.library is not None and kind.library_cls is not None:
            ctx.library, ctx.library_cls = kind.library, kind.library_cls
            ctx.library_catalog, ctx.library_view = library_view(
                kind.library, kind.library_cls, config.trl_version if kind.library == "trl" else None
            )
        try:
            for rule in applicable:
                findings.extend(rule.check(ctx))
        finally:
            clear_body_cache()
    findings.sort(key=Finding.sort_key)
    return findings


def lint_source(
    source: str,
    path: str,
    config: LintConfig,
    *,
    index: ProjectIndex | None = None,
    gate: bool = True,
) -> list[Finding]:
    """Lint one file's text. Raises ``SyntaxError`` for unparsable source (front ends decide)."""
    if gate and not prefilter.might_define_target(source, prefilter.gate_words(config.trainer_bases)):
        return []
    tree = ast.parse(source, filename=path)
    return lint_tree(tree, source.splitlines(), path, config, index=index)
