"""Every rule's own VALID/INVALID examples (its documentation) run as tests, Fixit style."""

from __future__ import annotations

import inspect
import re

import pytest
from lint_helpers import codes, lint_snippet
from trainwright_lint.rules import RULES, Rule
from trainwright_lint.rules.base import Example

CASES = [
    pytest.param(code, kind, i, ex, id=f"{code}-{kind}-{i}")
    for code, rule in sorted(RULES.items())
    for kind, examples in (("INVALID", rule.INVALID), ("VALID", rule.VALID))
    for i, ex in enumerate(examples)
]


@pytest.mark.parametrize(("code", "kind", "index", "example"), CASES)
def test_rule_examples(code: str, kind: str, index: int, example: Example) -> None:
    findings = lint_snippet(inspect.cleandoc(example.code), version=example.version, select=[code])
    if kind == "VALID":
        assert findings == [], f"{code} VALID[{index}] flagged: {[f.message for f in findings]}"
    else:
        assert codes(findings), f"{code} INVALID[{index}] not flagged"
        assert set(codes(findings)) == {code}
        if example.line is not None:
            assert example.line in [f.line for f in findings], [(f.line, f.message) for f in findings]


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_documentation_and_examples(code: str) -> None:
    rule: type[Rule] = RULES[code]
    assert re.fullmatch(r"TW\d{3}", rule.code) and rule.code == code
    assert re.fullmatch(r"[a-z0-9-]+", rule.name)
    assert rule.INVALID and rule.VALID, "each rule needs valid and invalid examples"
    page = rule.explain()
    assert page.startswith(f"# {code} {rule.name}\n")
    sections = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    # ruff's page layout, in this order (Why/Use instead only when the rule says why / has a fix or example)
    expected = ["What it does", "Example", "Message", "Fix safety", "Options"]
    assert [s for s in sections if s in expected] == expected, sections
    if rule.fix_applicability is not None:
        assert "Use instead" in sections, "a rule with a fix shows what it fixes to"
    assert len(inspect.cleandoc(rule.__doc__ or "")) > 200, "the docstring is the rule's documentation page"


def test_codes_and_names_are_unique() -> None:
    assert len({r.name for r in RULES.values()}) == len(RULES)
    assert sorted(RULES) == [
        "TW101",
        "TW102",
        "TW201",
        "TW202",
        "TW203",
        "TW301",
        "TW302",
        "TW303",
        "TW304",
        "TW305",
        "TW401",
        "TW402",
        "TW403",
    ]


def test_messages_name_a_replacement() -> None:
    """Precision first: each finding says what to do instead."""
    from trainwright_lint.rules.tw101_private_override import PrivateOverride

    for example in PrivateOverride.INVALID:
        (finding,) = lint_snippet(inspect.cleandoc(example.code), select=["TW101"])
        assert "; instead, " in finding.message
        assert re.search(
            r"`(on_\w+|get_\w+|save_model|\w+_strategy|train_sampling_strategy)`", finding.message
        ), finding.message


@pytest.mark.parametrize("code", sorted(RULES))
def test_use_instead_code_is_clean(code: str) -> None:
    """What a rule page shows under "Use instead" (a fix's real output or the hand-written advice)
    does not get the rule's own finding."""
    rule = RULES[code]
    shown = [ex.fixed for ex in rule.INVALID if ex.fixed] + ([rule.USE_INSTEAD] if rule.USE_INSTEAD else [])
    assert shown, f"{code} shows nothing under Use instead"
    for text in shown:
        version = next((ex.version for ex in rule.INVALID if ex.fixed == text), None)
        assert lint_snippet(inspect.cleandoc(text), version=version, select=[code]) == [], text


FIXED_CASES = [
    pytest.param(code, i, ex, id=f"{code}-INVALID-{i}")
    for code, rule in sorted(RULES.items())
    for i, ex in enumerate(rule.INVALID)
    if ex.fixed
]


@pytest.mark.parametrize(("code", "index", "example"), FIXED_CASES)
def test_invalid_example_fixes_to_its_fixed_code(code: str, index: int, example: Example) -> None:
    """Fixit style: an INVALID example carries the code its fix produces, and the fixer produces it."""
    from lint_helpers import fix_text

    source = inspect.cleandoc(example.code) + "\n"
    outcome = fix_text(
        source, version=example.version or "5.24.0", unsafe=RULES[code].fix_applicability == "unsafe"
    )
    assert outcome.fixed.decode() == inspect.cleandoc(example.fixed) + "\n"
    assert [f.code for f in outcome.applied] and {f.code for f in outcome.applied} <= {code}


def test_every_fixable_rule_shows_its_fix() -> None:
    assert {code for code, rule in RULES.items() if rule.fix_applicability} == {
        c for c, _, _ in (p.values for p in FIXED_CASES)
    }
