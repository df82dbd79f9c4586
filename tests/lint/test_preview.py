"""Preview rules (issue 33, ruff's model): a rule whose precision on the blind test split is under 0.90 is
off by default and on with ``--preview`` / ``preview = true``; the docs say which."""

from __future__ import annotations

import inspect
from pathlib import Path

from lint_helpers import ROOT
from trainwright_lint.cli import main
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source
from trainwright_lint.rules import RULES

SNIPPET = inspect.cleandoc(RULES["TW203"].INVALID[0].code) + "\n"


def test_tw203_is_preview_and_off_by_default() -> None:
    assert RULES["TW203"].preview
    off = lint_source(SNIPPET, "t.py", LintConfig(transformers_version="5.24.0"))
    on = lint_source(SNIPPET, "t.py", LintConfig(transformers_version="5.24.0", preview=True))
    assert "TW203" not in {f.code for f in off}
    assert "TW203" in {f.code for f in on}


def test_preview_flag_and_config(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "t.py").write_text(SNIPPET)
    assert (
        main(["lint", "--transformers-version", "5.24.0", "--output-format", "concise", str(tmp_path)]) == 0
    )
    assert "TW203" not in capsys.readouterr().out
    main(
        ["lint", "--preview", "--transformers-version", "5.24.0", "--output-format", "concise", str(tmp_path)]
    )
    assert "TW203" in capsys.readouterr().out
    (tmp_path / "pyproject.toml").write_text("[tool.trainwright]\npreview = true\n")
    main(["lint", "--transformers-version", "5.24.0", "--output-format", "concise", str(tmp_path)])
    assert "TW203" in capsys.readouterr().out


def test_docs_name_the_preview_rules() -> None:
    index = (ROOT / "docs" / "rules" / "index.md").read_text()
    for code, rule in RULES.items():
        assert (f"[{code}]({code}.md) | {rule.name} (preview" in index) == rule.preview, code
