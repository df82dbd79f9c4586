"""Every safe fix of the rule examples and the gallery trains as its original did (issue 32, in CI).

``scripts/oracle_matrix.py`` prints the full matrix (unsafe fixes, suggestions, more releases) and its last
run is recorded in docs/lint.md. This test is the part CI must never lose: each `[*]` fix the linter
writes for a rule example (for the release it names, and for ``>=4.44,<6``) and for the gallery is judged
on the pinned release and on 4.46.3 (4.45.2 installed as the last release where an original that fails
on both ran), and every one of them is equal. "Not runnable" is a failure here, unless the fixed
program fails exactly as the original does (another bug of the example, which no safe fix touches: the
gallery's ``broken_callback_before.py`` also returns a bool from ``on_evaluate``): a fix the oracle
cannot judge is a fix nobody has shown to be safe.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import oracle_matrix


@pytest.mark.slow
def test_every_safe_fix_of_the_rule_examples_and_the_gallery_is_oracle_equal(
    tmp_path: Path, installed_release
) -> None:
    _reference, first = installed_release("4.45.2", "4.46.3")
    cases = oracle_matrix.rule_example_cases(tmp_path / "rules")
    cases += oracle_matrix.gallery_cases(tmp_path / "gallery")
    safe = [c for c in cases if not c.unsafe]
    releases = {"4.46.3": first, oracle_matrix.PINNED: None}
    for group, judged_on in oracle_matrix.in_ranges(safe, releases):
        oracle_matrix.run(group, judged_on)
    judged = [c for c in safe if c.verdicts]
    assert len(judged) >= 10, oracle_matrix.report(safe)
    wrong = {
        c.name: (c.verdicts, c.reasons, [str(d) for found in c.differences.values() for d in found])
        for c in judged
        if any(
            v == "different" or (v == "not runnable" and "fail alike" not in c.reasons.get(r, ""))
            for r, v in c.verdicts.items()
        )
    }
    assert wrong == {}, oracle_matrix.report(safe)
    equal = [c for c in judged if set(c.verdicts.values()) == {"equal"}]
    assert len(equal) >= len(judged) - 1, oracle_matrix.report(safe)  # the gallery's three-bug callback
    tw402 = next(c for c in judged if c.name.startswith("TW402 example 0 for"))
    assert set(tw402.references.values()) == {oracle_matrix.DECLARED}
    on_4x = [c for c in judged if "4.46.3" in c.verdicts]
    assert len(on_4x) >= 5, oracle_matrix.report(safe)
