"""The overrides docs/guide.md recommends lint clean on every catalogued release.

It recommended ``def log(self, logs, start_time=None): super().log(logs, start_time)``, which raises
``TypeError`` before 4.47 (``Trainer.log`` had no ``start_time``): TW302 on 4.36-4.46.
"""

from __future__ import annotations

import re

from lint_helpers import ROOT, lint_snippet

GUIDE = ROOT / "docs" / "guide.md"


def recommended() -> str:
    section = GUIDE.read_text(encoding="utf-8").split("## When you must override", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    return "from transformers import Trainer\n\n\n" + code


def test_the_recommended_overrides_are_clean_on_the_whole_catalogue() -> None:
    code = recommended()
    assert "def log(" in code and "def compute_loss(" in code
    for release in ("4.36.0", "4.45.2", "4.46.3", "4.47.0", "5.24.0", "5.25.0"):
        assert [f.code for f in lint_snippet(code, version=release) if f.code.startswith("TW3")] == [], (
            release
        )
    assert [f.code for f in lint_snippet(code, version=">=4.36") if f.code.startswith("TW3")] == []


def test_the_old_recommendation_is_caught() -> None:
    """The check above can fail: the guide's former `log` override breaks before 4.47."""
    old = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def log(self, logs, start_time=None):\n        super().log(logs, start_time)\n"
    assert "TW302" in [f.code for f in lint_snippet(old, version="4.45.2")]
