"""``--format github``: one workflow command per finding, escaped as the Actions runner expects."""

from __future__ import annotations

import io

from lint_helpers import dedent, lint_text
from trainwright_lint.finding import Finding
from trainwright_lint.output import github


def test_annotations_for_real_findings() -> None:
    source = dedent(
        """
        from transformers import Trainer

        class MyTrainer(Trainer):
            def _save_checkpoint(self, model, trial):
                super()._save_checkpoint(model, trial)
        """
    )
    findings = lint_text(source, path="src/train.py")
    stream = io.StringIO()
    github.render(findings, stream)
    lines = stream.getvalue().splitlines()
    assert len(lines) == len(findings) == 1
    assert lines[0].startswith("::warning file=src/train.py,line=4,col=5,endLine=4,endColumn=")
    assert ",title=TW101 private-override::TW101 `_save_checkpoint` overrides" in lines[0]


def test_escaping() -> None:
    f = Finding(
        code="TW000",
        name="file-not-linted",
        message="cannot parse: 100% broken\nsecond line",
        path="a,b:c.py",
        line=1,
        column=1,
        end_line=1,
        end_column=2,
    )
    line = github.annotation(f)
    assert line.startswith("::error file=a%2Cb%3Ac.py,line=1,")
    assert line.endswith("::TW000 cannot parse: 100%25 broken%0Asecond line")
    assert "\n" not in line
