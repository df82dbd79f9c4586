"""Releases as data: judging a rule's candidates once per run of equal catalogue facts gives exactly
the findings (messages, release ranges, fixes and fix notes) of judging them at every release."""

from __future__ import annotations

import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.analysis.workspace import parse_source
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import enabled_rules, lint_unit, single_file_workspace, target_releases
from trainwright_lint.project.summary import summarise
from trainwright_lint.rules import RULES

from trainwright.catalog import load_catalog

FIXTURES = Path(__file__).parent / "fixtures"
RANGES = (">=4.36", ">=4.46,<5.25", ">=4.44,<4.50", ">=5.0")


def _sources() -> list[tuple[str, str]]:
    out = []
    for code, rule in sorted(RULES.items()):
        for i, example in enumerate((*rule.VALID, *rule.INVALID)):
            out.append((f"{code}-{i}", textwrap.dedent(example.code).lstrip("\n")))
    for path in sorted((FIXTURES / "rules").glob("*.py")) + sorted((FIXTURES / "trl_project").glob("*.py")):
        out.append((path.name, path.read_text(encoding="utf-8")))
    return out


def _lint(source: str, path: Path, version: str, per_release: bool) -> list[dict[str, object]]:
    config = LintConfig(transformers_version=version)
    workspace = single_file_workspace(str(path), config)
    tree = parse_source(source, str(path))
    unit = FileUnit(str(path), source, tree, summarise(tree, str(path), source, workspace.words))
    workspace.add(unit)
    findings = lint_unit(
        unit, workspace, target_releases(config), enabled_rules(config), per_release=per_release
    )
    return [asdict(f) for f in findings]


@pytest.mark.parametrize("version", RANGES)
def test_runs_agree_with_every_release(version: str, tmp_path: Path) -> None:
    compared = reported = 0
    for name, source in _sources():
        path = tmp_path / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        fast = _lint(source, path, version, per_release=False)
        slow = _lint(source, path, version, per_release=True)
        assert fast == slow, name
        compared += 1
        reported += len(fast)
    assert compared > 30 and reported > 20  # the corpus exercises the rules


def test_method_runs_group_equal_facts() -> None:
    catalog = load_catalog()
    releases = catalog.versions
    for name in ("compute_loss", "log", "training_step", "tokenizer", "_get_train_sampler"):
        runs = catalog.method_runs(name, "Trainer", releases)
        assert len(runs) == len(releases)
        assert 1 < len(set(runs)) < len(releases)  # it changed, but not at every release
        for i in range(1, len(releases)):
            same = catalog.at(releases[i]).method(name) == catalog.at(releases[i - 1]).method(name)
            if runs[i] == runs[i - 1]:
                assert same, (name, releases[i])


def test_runs_never_bridge_a_missing_release() -> None:
    catalog = load_catalog()
    gap = (catalog.versions[0], catalog.versions[2])
    assert catalog.method_runs("compute_loss", "Trainer", gap) == (0, 1)
    assert catalog.event_runs(gap) == (0, 1)


def test_caller_closure_reaches_the_entry_points() -> None:
    closure = load_catalog().caller_closure("compute_loss")
    assert "training_step" in closure and "train" in closure
    assert all("." not in name for name in closure)


def test_every_class_rule_that_reads_a_release_judges_candidates() -> None:
    """A class rule evaluated at every release makes a declared range cost 64 times one release
    (TW305 did, 0.5 s on TRL): such a rule implements ``candidates`` and names what it reads."""
    per_release = [
        code
        for code, rule in sorted(RULES.items())
        if rule.scope == "class" and rule.reads_release() and not rule.judges_candidates()
    ]
    assert per_release == []
