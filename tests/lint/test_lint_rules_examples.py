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
    assert "## Flagged" in page and "## Not flagged" in page
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
