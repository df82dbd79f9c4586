"""Each rule reads the shared facts it declares (``Rule.FACTS``, ``analysis.facts``), as Fixit's rules
declare their metadata providers: run alone over its examples and the rule fixtures, a rule reads no
fact outside its declaration (with what those facts read), and reads every fact it declares."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from trainwright_lint.analysis.facts import INDEXES, FactStore, SharedFact, closure
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source
from trainwright_lint.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures" / "rules"


@contextmanager
def reads() -> Iterator[set[SharedFact[Any]]]:
    seen: set[SharedFact[Any]] = set()
    FactStore.observer = seen.add
    try:
        yield seen
    finally:
        FactStore.observer = None


def facts_read(code: str) -> set[SharedFact[Any]]:
    rule = RULES[code]
    with reads() as seen:
        for example in (*rule.INVALID, *rule.VALID):
            source = textwrap.dedent(inspect.cleandoc(example.code))
            lint_source(
                source,
                "snippet.py",
                LintConfig(select=(code,), transformers_version=example.version, preview=True),
            )
        for path in sorted(FIXTURES.glob("*.py")):
            lint_source(
                path.read_text(encoding="utf-8"),
                str(path),
                LintConfig(select=(code,), preview=True),
                gate=False,
            )
    return seen - set(INDEXES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_a_rule_reads_what_it_declares(code: str) -> None:
    declared = set(RULES[code].FACTS)
    read = facts_read(code)
    assert read <= closure(declared), (
        f"{code} reads undeclared facts: {sorted(map(repr, read - closure(declared)))}"
    )
    assert declared <= read, f"{code} declares facts it never reads: {sorted(map(repr, declared - read))}"


def test_the_check_sees_an_undeclared_read() -> None:
    """The recording is real: TW201 reads the observation of a method, which TW101 does not declare."""
    assert RULES["TW201"].FACTS and not set(RULES["TW101"].FACTS) >= set(RULES["TW201"].FACTS)
    read = facts_read("TW201")
    assert not read <= closure(RULES["TW101"].FACTS)


def test_a_fact_is_computed_once_per_key() -> None:
    store = FactStore()
    fact: SharedFact[int] = SharedFact("a number", "file")
    other: SharedFact[int] = SharedFact("a number", "file")  # same name, another fact
    calls: list[int] = []
    assert store.get(fact, 1, lambda: calls.append(1) or 10) == 10
    assert store.get(fact, 1, lambda: calls.append(2) or 20) == 10
    assert store.get(other, 1, lambda: calls.append(3) or 30) == 30
    assert store.get(fact, 2, lambda: calls.append(4) or None) is None
    assert store.get(fact, 2, lambda: calls.append(5) or 50) is None  # None is a value too
    assert calls == [1, 3, 4]
    with pytest.raises(ValueError):
        SharedFact("bad", "module")
