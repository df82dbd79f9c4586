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
    assert len(first) >= 14 and classes >= 12  # TW203 (a preview rule) and TW201 in training_step are off
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


PROJECT_CALL = """

class CallingTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    def my_step(self, model, inputs):
        return self.compute_loss(model, inputs, False, None, 7, 8)


class GatedPrintTrainer(CallingTrainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.state.global_step % 100 == 0:
            print(f"step {self.state.global_step}: {loss.item()}")  # noqa: E501
        return loss
"""

# Edits that move classes: (old, new, the classes the class rules run on again; None: not checked).
# Each replaces the first ``old`` of the text the previous one left; the findings must equal a fresh
# lint's in every field.
MOVING_EDITS = [
    ("\n\nclass SgdTrainer(", "\n\n\nclass SgdTrainer(", set()),  # a blank line above a class
    ("import torch\n", "import torch\n# a comment\n", set()),  # a comment line near the top
    ('print("batch done")', 'print("batch done")\n        print("more")', {"PrintingCallback"}),
    ("\n\n\nclass SgdTrainer(", "\n\nclass SgdTrainer(", set()),  # a line deleted
    ('print("batch done")\n        print("more")', 'print("batch done")', {"PrintingCallback"}),
    (  # a line inside the base: the subclass's hierarchy holds it, the call site's line moves
        "    def my_step(self, model, inputs):\n",
        "    def my_step(self, model, inputs):\n        inputs = dict(inputs)\n",
        {"CallingTrainer", "GatedPrintTrainer"},
    ),
    ("\n\nclass CallingTrainer(", "\n\n# calls\n\nclass CallingTrainer(", set()),  # TW301's m.py:N moves
    ("class GatedPrintTrainer(CallingTrainer):", "class GatedPrintTrainer(Trainer):", None),  # a base list
    ("        inputs = dict(inputs)\n", "", {"CallingTrainer"}),  # lines deleted inside a class
]


def everything(findings: list) -> list[tuple[object, ...]]:
    """Every field of each finding, the ones equality leaves out included (its fix, its ``noqa``
    lines, the moved statements), but the ``ast`` node."""
    return [(f, f.noqa_lines, f.moved, f.releases, f.fix_note, type(f.fix).__name__, f.fix) for f in findings]


def test_moved_classes_keep_their_findings_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding or deleting lines moves the classes below; they are not linted again, and what the
    server reports equals a fresh lint of the new text (lines, messages' line numbers, fixes)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    path = tmp_path / "m.py"
    parts = [p.read_text(encoding="utf-8") for p in sorted(GALLERY.glob("*_before.py"))]
    text = "\n\n".join(parts) + SUBCLASS + PROJECT_CALL
    linted: list[str] = []
    real_lint_unit = incremental.lint_unit

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        linted.extend(k.rsplit("::", 1)[-1] for k in kwargs.get("classes") or ())
        return real_lint_unit(*args, **kwargs)

    monkeypatch.setattr(incremental, "lint_unit", counting)
    session = Session()
    first = session.lint(str(path), text)
    assert {"m.py:", "(lines "} <= {m for f in first for m in ("m.py:", "(lines ") if m in f.message}
    for old, new, relinted in MOVING_EDITS:
        assert old in text, old
        text = text.replace(old, new, 1)
        linted.clear()
        got = session.lint(str(path), text)
        again = set(linted)
        assert everything(got) == everything(Session().lint(str(path), text)), (old, new)
        if relinted is not None:
            assert again == relinted, (old, new)
