"""The rule class is the only owner of its declarations (issue 36).

Release dependence, fixability, the fix module and title, and ``fix --suggest`` support are attributes
of the rule; every list of codes the front ends, the fixer, the target resolution and the generated
docs use is derived from the registry. Two checks: no TW code is kept by hand in a string outside
``rules/`` (a short, justified allow-list), and a throw-away fixable, release-dependent rule registered
at run time reaches every one of those places with nothing but its own module and fix module.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from lint_helpers import fix_text, lint_text
from trainwright_lint import rules as registry
from trainwright_lint.cli import build_parser
from trainwright_lint.configuration import LintConfig
from trainwright_lint.configuration.target import Target
from trainwright_lint.rules import RULES, fixable, fixes, fixing_rules, release_dependent, suggested
from trainwright_lint.rules.base import (
    CALLBACK_EVENTS,
    EVERY_RELEASE,
    SAFE,
    TRAINER_API,
    Rule,
    declaration_problems,
)

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin" / "trainwright_lint"
CODE = re.compile(r"\bTW\d{3}\b")

# (file, code) -> why a code may be written there. Not rules (no class to declare them), examples in
# messages, another branch's module, and the scoring scripts, whose codes are the labels of data.
ALLOWED: dict[tuple[str, str], str] = {
    ("plugin/trainwright_lint/finding.py", "TW000"): "NOT_LINTED: a file not linted, not a rule",
    ("plugin/trainwright_lint/noqa.py", "TW001"): "UNUSED_NOQA: a check of noqa comments, not a rule",
    ("plugin/trainwright_lint/configuration/pyproject.py", "TW101"): "an example in an error message",
    ("plugin/trainwright_lint/commands/options.py", "TW301"): "an example in `--select`'s help",
    ("plugin/trainwright_lint/commands/explain.py", "TW101"): "an example in `explain`'s help",
    ("scripts/gen_rule_docs.py", "TW101"): "the example code in TW001's example headline",
    ("scripts/gen_rule_docs.py", "TW000"): "prose of the rules index (a link to the TW000 page)",
    ("scripts/gen_rule_docs.py", "TW001"): "prose of the TW001 page (how to silence it)",
    ("plugin/trainwright_lint/server/actions.py", "TW000"): "server/ is another branch's room (NOT_LINTED)",
    ("scripts/label_agreement.py", "TW303"): "a label column of the hand-labelled corpus (data)",
    **{
        ("scripts/ecosystem_check.py", code): "scoring families and call-site labels of the labelled corpus"
        for code in ("TW301", "TW302", "TW303", "TW304")
    },
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (documentation, not lists the code reads)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def codes_in_literals(path: Path) -> set[str]:
    """The TW codes written in ``path``'s string literals (f-string parts included), docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return {
        code
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        for code in CODE.findall(node.value)
    }


def _sources() -> Iterator[Path]:
    for path in sorted(PLUGIN.rglob("*.py")):
        if "rules" not in path.relative_to(PLUGIN).parts[:1]:
            yield path
    yield from sorted((ROOT / "scripts").glob("*.py"))


def test_no_code_is_listed_by_hand_outside_the_rules() -> None:
    found = {(str(path.relative_to(ROOT)), code) for path in _sources() for code in codes_in_literals(path)}
    assert sorted(found - set(ALLOWED)) == [], "derive the list from the registry (rules/__init__.py)"
    assert len(ALLOWED) <= 16


def test_the_scan_sees_a_hand_kept_list(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('"""Docs may name TW301."""\nFIXED = ("TW301", f"{1}TW402")\n# TW999 in a comment\n')
    assert codes_in_literals(path) == {"TW301", "TW402"}


def test_the_registry_derives_each_list_from_the_declarations() -> None:
    assert set(fixable()) == {c for c, r in RULES.items() if r.fix_module is not None}
    assert suggested() == tuple(sorted(c for c, r in RULES.items() if r.suggestion))
    assert set(release_dependent()) == {c for c, r in RULES.items() if r.release_facts == TRAINER_API}
    assert {r.release_facts for r in RULES.values()} == {EVERY_RELEASE, CALLBACK_EVENTS, TRAINER_API}
    assert all(declaration_problems(r) == [] for r in RULES.values())


def test_a_self_contradicting_declaration_fails_where_the_rule_is_defined() -> None:
    with pytest.raises(TypeError, match="TW398 .*candidates"):

        class _Wrong(Rule):  # reads the release but judges nothing per release
            code = "TW398"
            name = "wrong"
            message = "wrong"
            release_facts = TRAINER_API

    with pytest.raises(TypeError, match="fix_title"):

        class _Untitled(Rule):
            code = "TW397"
            name = "untitled"
            message = "untitled"
            release_facts = EVERY_RELEASE
            fix_applicability = SAFE
            fix_module = "nowhere"


# ----------------------------------------------------------------------------------------------------
# A new fixable, release-dependent rule: its module and its fix module, nothing else.

RULE_MODULE = '''
"""TW399 (throw-away, for a test): `old_hook` was renamed `new_hook`."""
from dataclasses import dataclass

from trainwright_lint.analysis.facts import METHODS
from trainwright_lint.edits import Edit
from trainwright_lint.rules.base import SAFE, Candidate, Example, Rule, trainer_fact


@dataclass(frozen=True)
class RenameHook(Edit):
    method: str
    line: int
    new: str
    unsafe: bool = False

    def describe(self):
        return f"Rename `{self.method}` to `{self.new}`"


class RenamedHook(Rule):
    """An `old_hook` override that the Trainer never calls: it calls `new_hook`.

    A throw-away rule: it exists to show what adding a rule touches.
    """

    code = "TW399"
    name = "renamed-hook"
    message = "`old_hook` is never called; the Trainer calls `new_hook`"
    FACTS = (METHODS,)
    fix_applicability = SAFE
    fix_module = "tw_throwaway.tw399_renamed_hook_fix"
    fix_pass = 9
    fix_title = "rename `old_hook` to `new_hook`"
    INVALID = (Example("from transformers import Trainer\\nclass T(Trainer):\\n    def old_hook(self):\\n        pass\\n"),)

    def candidates(self, ctx):
        for method, node in ctx.methods():
            if method.name == "old_hook":
                yield Candidate(
                    at=lambda c, node=node: self.report(
                        c, node, self.message, method="old_hook", fix=RenameHook("old_hook", node.lineno, "new_hook")
                    )
                    if c.trainer_method("training_step") is not None
                    else None,
                    reads=(trainer_fact(ctx.catalog_cls, "training_step"),),
                )
'''

FIX_MODULE = """
import libcst as cst

from trainwright_lint.rules._cst import MethodTransformer
from tw_throwaway.tw399_renamed_hook import RenameHook


class Fixer(MethodTransformer[RenameHook]):
    def leave_FunctionDef(self, original, updated):
        edit = self.edit_for(original)
        return updated if edit is None else updated.with_changes(name=cst.Name(edit.new))
"""


@pytest.fixture
def throwaway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> type[Rule]:
    """TW399 written as a plugin author writes a rule (a module and a fix module) and registered."""
    package = tmp_path / "tw_throwaway"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tw399_renamed_hook.py").write_text(textwrap.dedent(RULE_MODULE))
    (package / "tw399_renamed_hook_fix.py").write_text(textwrap.dedent(FIX_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("tw_throwaway")]:
        monkeypatch.delitem(sys.modules, name)
    module = importlib.import_module("tw_throwaway.tw399_renamed_hook")
    rule: type[Rule] = module.RenamedHook
    monkeypatch.setitem(registry.RULES, rule.code, rule)
    return rule


def _gen_rule_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_rule_docs_36", ROOT / "scripts" / "gen_rule_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOKED = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def old_hook(self):\n        pass\n"


def test_a_registered_rule_is_linted_fixed_and_listed_everywhere(throwaway: type[Rule]) -> None:
    # lint and fix: the engine judges it per run of releases, the fixer finds its fix module
    assert "TW399" in {f.code for f in lint_text(HOOKED)}
    outcome = fix_text(HOOKED)
    assert b"def new_hook(self):" in outcome.fixed and "TW399" not in {f.code for f in outcome.remaining}
    assert throwaway in fixing_rules()
    # every derived list
    assert fixable()["TW399"] == SAFE and ("TW399", throwaway.fix_title) in fixes(SAFE)
    assert "TW399" in release_dependent() and "TW399" not in suggested()
    # off for a project pinned below the catalogue, on otherwise
    old = Target("transformers", ("4.36.0",), "==4.18.0", "pyproject.toml", below_catalogue=True)
    assert not LintConfig(transformers_target=old).code_enabled("TW399")
    assert LintConfig().code_enabled("TW399")
    # the fix command's help and the generated docs
    fix_help = build_parser(["fix"])._subparsers._group_actions[0].choices["fix"].format_help()  # type: ignore[union-attr]
    assert "TW399" in fix_help
    pages = _gen_rule_docs().pages()
    assert (
        "TW399.md" in pages and "| [TW399](TW399.md) | rename `old_hook` to `new_hook` |" in pages["index.md"]
    )
    assert "transformers-version" in pages["TW399.md"]  # a release-dependent rule's page lists the option


def test_the_throwaway_rule_is_gone_after_the_test() -> None:
    assert "TW399" not in RULES and "TW399" not in fixable()


# ----------------------------------------------------------------------------------------------------
# One caching idiom for facts about code (docs/lint.md, "Caching facts"): the fact store. Nothing is
# kept on a tree node, anywhere in the plugin.


def test_no_fact_is_kept_on_a_tree_node() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_architecture import ad_hoc_caches
    finally:
        sys.path.remove(str(ROOT / "tests"))
    on_nodes = [
        f"{path.relative_to(PLUGIN)}: {found}"
        for path in sorted(PLUGIN.rglob("*.py"))
        for found in ad_hoc_caches(path)
        if found.endswith(" set")
    ]
    assert on_nodes == []
