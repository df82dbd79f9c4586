"""A fix pass re-lints a changed file against the run's workspace: the verdict must be the new text's.

The workspace keeps hierarchy facts (the clock attributes of a class's hierarchy, which methods read an
attribute) across the files of a run. When a file comes back with new text, those facts were computed
from the old one; a re-lint that kept them judged ``if self.t0 > 60`` as a condition on time after the
``self.t0 = time.time()`` that made it one was gone. Each case lints the old text, then the new text in
the same workspace, and compares with the new text linted in a fresh workspace.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source, single_file_workspace

CLOCK_START = """\
import time
from transformers import Trainer


class T(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        self.t0 = time.time()
        return super().training_step(model, inputs, num_items_in_batch)

    def log(self, logs, start_time=None):
        if self.t0 > 60:
            print(logs)
        super().log(logs, start_time)
"""

CASES = {
    "clock attribute removed": (CLOCK_START, CLOCK_START.replace("time.time()", "len(inputs)")),
    "clock attribute added": (CLOCK_START.replace("time.time()", "len(inputs)"), CLOCK_START),
}


def _verdicts(findings: list) -> list[tuple[str, int]]:
    return sorted((f.code, f.line) for f in findings)


@pytest.mark.parametrize("name", sorted(CASES))
def test_relint_of_new_text_matches_a_fresh_lint(tmp_path: Path, name: str) -> None:
    old, new = CASES[name]
    path = tmp_path / "trainer.py"
    path.write_text(old, encoding="utf-8")
    config = LintConfig(root=tmp_path, transformers_version="5.24.0")
    workspace = single_file_workspace(str(path), config)
    before = _verdicts(lint_source(old, str(path), config, workspace=workspace))

    path.write_text(new, encoding="utf-8")
    again = _verdicts(lint_source(new, str(path), config, workspace=workspace))
    fresh = _verdicts(lint_source(new, str(path), config, workspace=single_file_workspace(str(path), config)))

    assert fresh != before, "the case must change the verdict, or it tests nothing"
    assert again == fresh
