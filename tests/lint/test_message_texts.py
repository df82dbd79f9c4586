"""What the messages say, where issue 22 found them wrong: the method a stale super() call reaches,
code spans that hold code only, the keyword arguments of every release of the range, and a fix
description that names only what the fix does."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

from lint_helpers import FIXTURES, ROOT, lint_snippet
from trainwright_lint.output.fix_record import fix_record
from trainwright_lint.rules import RULES

from trainwright.catalog import load_catalog

BASE = """\
from transformers import Trainer


class BaseTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return super().compute_loss(model, inputs, return_outputs)


class Child(BaseTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)
"""


def test_tw302_names_the_method_of_a_project_base() -> None:
    (stale,) = [f for f in lint_snippet(BASE, "5.24.0") if f.code == "TW302"]
    assert "`BaseTrainer.compute_loss(self, model, inputs, return_outputs=False)`" in stale.message
    assert "`BaseTrainer(self" not in stale.message


def _all_messages() -> list[str]:
    messages = []
    for rule in RULES.values():
        for example in rule.INVALID:
            messages += [f.message for f in lint_snippet(inspect.cleandoc(example.code), example.version)]
    for path in [*FIXTURES.glob("rules/*.py"), *(ROOT / "examples" / "gallery").glob("*_before.py")]:
        for version in (None, ">=4.44,<4.46"):
            messages += [f.message for f in lint_snippet(path.read_text(encoding="utf-8"), version)]
    return messages


def test_code_spans_hold_code_only() -> None:
    """``on_step_begin -> on_step_end`` and ``on_step_end or on_log`` were one span each: an arrow and
    a word of prose inside backticks, which renders as one (wrong) identifier."""
    messages = _all_messages()
    assert len(messages) > 50
    for message in messages:
        assert message.count("`") % 2 == 0, message
        for span in re.findall(r"`([^`]*)`", message):
            assert not re.search(r" -> | or |\(trl ", span), message
    assert any("`on_step_begin` -> `on_step_end`" in m for m in messages)
    assert any("`on_step_end` or `on_log`" in m for m in messages)


CALLBACK = """\
from transformers import TrainerCallback


class Printer(TrainerCallback):
    def on_log(self, args, state, control, logs=None):
        print(logs)
"""


def test_tw402_names_what_each_release_of_the_range_passes() -> None:
    (on_4x,) = [f.message for f in lint_snippet(CALLBACK, ">=4.44,<4.46")]
    assert "`tokenizer=`" in on_4x and "processing_class" not in on_4x
    (on_5x,) = [f.message for f in lint_snippet(CALLBACK, ">=5.0")]
    assert "`processing_class=`" in on_5x and "tokenizer" not in on_5x
    (across,) = [f.message for f in lint_snippet(CALLBACK, ">=4.44")]
    newest = load_catalog().versions[-1]  # the range runs to the newest catalogued release
    assert "`tokenizer=` (on 4.44.0–4.45.2)" in across and f"`processing_class=` (on 4.46.0–{newest})" in across


def test_a_fix_describes_a_super_call_only_when_there_is_one() -> None:
    no_super = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n"
    with_super = no_super.replace(
        "model(**inputs).loss", "super().compute_loss(model, inputs, return_outputs)"
    )
    (bare,) = [f for f in lint_snippet(no_super, "5.24.0") if f.code == "TW301"]
    (forwarding,) = [f for f in lint_snippet(with_super, "5.24.0") if f.code == "TW301"]
    assert fix_record(bare.fix)["message"] == "Add `num_items_in_batch=None` to `compute_loss`"
    assert "super().compute_loss()" in fix_record(forwarding.fix)["message"]


def test_the_json_fix_message_matches_what_fix_writes(tmp_path: Path) -> None:
    path = tmp_path / "t.py"
    path.write_text(
        "from transformers import Trainer\n\n\nclass T(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n"
    )
    run = [sys.executable, "-m", "trainwright_lint"]
    shown = subprocess.run(
        [*run, "lint", "--format", "json", "--transformers-version", "5.24.0", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    (record,) = json.loads(shown.stdout)
    subprocess.run(
        [*run, "fix", "--unsafe-fixes", "--transformers-version", "5.24.0", str(path)],  # own loss: unsafe
        capture_output=True,
        cwd=tmp_path,
        check=False,
    )
    assert "super()" not in record["fix"]["message"] and "super()" not in path.read_text()
    assert "num_items_in_batch=None" in path.read_text()
