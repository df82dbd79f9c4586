"""The server re-lints only the classes an edit can change (``server.incremental``), and what it
reports is what a whole lint of the same text reports, after every edit of a sequence: edits inside
one class, in a base class that a subclass in the same module inherits from, of a base list, and
edits that add lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from checkout import GALLERY
from trainwright_lint.server import incremental
from trainwright_lint.server.session import Session

SUBCLASS = """

class ChildLossTrainer(WeightedLossTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)
"""

EDITS = [  # (old, new): each applied to the text the previous edit left
    ("print(self.tokenizer", "print(self.processing_class"),  # inside one class: TW303 goes
    ("def on_batch_end(", "def on_step_end("),  # a callback event renamed: TW401 goes
    ("return_outputs=False):", "return_outputs=False, num_items_in_batch=None):"),  # a base fixed
    ("class SgdTrainer(Trainer):", "class SgdTrainer(object):"),  # a base list: roles change
    ('print("batch done")', 'print("batch done")\n        print("more")'),  # a line added
    ("import torch\n", "import torch\nimport math\n"),  # a module-level line added: the classes below move
    (
        "print(self.processing_class.batch_decode(labels[:1]))",
        "print(self.tokenizer.batch_decode(labels[:1]))  # noqa: TW303",
    ),
    ("return_outputs=False, num_items_in_batch=None):", "return_outputs=False):"),  # the base again
]


def places(findings: list) -> list[tuple[object, ...]]:
    return [(f.code, f.line, f.column, f.end_line, f.end_column, f.message) for f in findings]


@pytest.fixture
def module(tmp_path: Path) -> Path:
    """Every gallery "before" file in one module, and a subclass of one of its trainers."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    path = tmp_path / "trainers.py"
    parts = [p.read_text(encoding="utf-8") for p in sorted(GALLERY.glob("*_before.py"))]
    path.write_text("\n\n".join(parts) + SUBCLASS, encoding="utf-8")
    return path


def test_every_edit_reports_what_a_whole_lint_reports(module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    linted: list[str] = []  # the class keys the class rules ran on
    real_lint_unit = incremental.lint_unit

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        linted.extend(kwargs.get("classes") or ())
        return real_lint_unit(*args, **kwargs)

    monkeypatch.setattr(incremental, "lint_unit", counting)
    session = Session()
    text = module.read_text(encoding="utf-8")
    first = session.lint(str(module), text)
    classes = len(linted)
    assert len(first) >= 15 and classes >= 12  # TW203 (a preview rule) is off
    seen_codes = set()
    for old, new in EDITS:
        assert old in text, old
        text = text.replace(old, new, 1)
        linted.clear()
        got = session.lint(str(module), text)
        whole = Session().lint(str(module), text, whole=True)
        assert places(got) == places(whole), (old, new)
        seen_codes |= {f.code for f in got}
        relinted = list(linted)
        if "\n" not in new and not old.startswith("class "):
            assert len(relinted) < classes / 2, (old, new, relinted)  # only the edited hierarchy
    assert {"TW301", "TW302", "TW401"} <= seen_codes


def test_a_subclass_is_linted_again_when_its_base_changes(module: Path) -> None:
    session = Session()
    text = module.read_text(encoding="utf-8")
    child = [f for f in session.lint(str(module), text) if f.class_name == "ChildLossTrainer"]
    assert "TW302" in {f.code for f in child}  # passes num_items_in_batch= to a base without it
    fixed = text.replace("return_outputs=False):", "return_outputs=False, num_items_in_batch=None):", 1)
    child = [f for f in session.lint(str(module), fixed) if f.class_name == "ChildLossTrainer"]
    assert "TW302" not in {f.code for f in child}
