"""Preview variants (issue 33): a rule's findings on the overridden methods where its precision on the blind
test split is under 0.90 (``Rule.preview_variants``: overridden method and kind of code) are reported, and
fixed, only with ``--preview``."""

from __future__ import annotations

import sys
from pathlib import Path

from lint_helpers import dedent, file_linter, lint_text
from trainwright_lint.fixes import fix_bytes
from trainwright_lint.rules import RULES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import ecosystem_check  # the corpus scorer

GATED = """
    from transformers import Trainer

    class T(Trainer):
        def {method}(self, *args, **kwargs):
            out = super().{method}(*args, **kwargs)
            if self.state.global_step % 50 == 0:
                print("step", self.state.global_step)
            return out
"""


def test_a_timer_in_training_step_is_a_preview_variant() -> None:
    assert "times" in RULES["TW201"].preview_variants["training_step"]
    source = dedent(RULES["TW201"].INVALID[0].code)  # a timer around ``super().training_step``
    assert not [f for f in lint_text(source) if f.code == "TW201"]
    (finding,) = [f for f in lint_text(source, preview=True) if f.code == "TW201"]
    assert finding.kind == "times" and finding.fix is not None  # a move exists: it is only off by default
    plain, preview = (
        fix_bytes(source.encode(), "t.py", file_linter("t.py", preview=p), unsafe=True) for p in (False, True)
    )
    assert not plain.changed and preview.changed  # `fix --unsafe-fixes` writes it only with --preview


def test_gated_code_in_training_step_is_on_by_default() -> None:
    # the variant that was right on its blind test-split findings (1 of 1, docs/lint-accuracy.md)
    source = dedent(GATED.format(method="training_step"))
    (finding,) = [f for f in lint_text(source) if f.code == "TW201"]
    assert finding.kind == "runs" and finding.fix is not None


def test_a_schedule_in_training_step_is_on_by_default() -> None:
    # the dev split's one finding with a move was right; the test split has none (docs/lint-accuracy.md)
    source = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                self.beta = max(0.1, 1.0 - self.state.global_step / 1000)
                return super().training_step(model, inputs, num_items_in_batch)
    """)
    (finding,) = [f for f in lint_text(source) if f.code == "TW201"]
    assert finding.kind == "advances" and finding.fix is not None
    assert {"adds", "keeps", "times"} == set(RULES["TW201"].preview_variants["training_step"])


def test_the_other_variants_stay_on() -> None:
    for method in ("evaluate", "log"):
        source = dedent(GATED.format(method=method))
        assert [f for f in lint_text(source) if f.code == "TW201"], method


def test_the_scorer_reads_each_findings_kind_from_its_message() -> None:
    # ``scripts/ecosystem_check.py`` keys the variants table by the message's first verb: a reworded
    # message would silently merge the variants the preview decision is read from
    timer = dedent(RULES["TW201"].INVALID[0].code)  # a timer around ``super().training_step``
    kinds = {
        ecosystem_check.kind_of(f.message)
        for source in (timer, dedent(GATED.format(method="log")))
        for f in lint_text(source, preview=True)
        if f.code == "TW201"
    }
    assert kinds == {"times", "runs"}
    findings = [f for f in lint_text(timer, preview=True) if f.code.startswith("TW20")]
    assert findings and all(
        ecosystem_check.kind_of(f.message) == f.kind for f in findings
    )  # one verb, two readers
    assert ecosystem_check.kind_of("`log` adds printing" + ecosystem_check.UNMOVED) == "adds, no move"
