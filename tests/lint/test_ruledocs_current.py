"""docs/rules/: one generated page per rule, current with the rule classes (CI fails otherwise), and
``trainwright explain TWxxx`` prints the same page."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from trainwright_lint.cli import main
from trainwright_lint.rules import RULES

ROOT = Path(__file__).resolve().parents[2]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_rule_docs", ROOT / "scripts" / "gen_rule_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_rule_docs", module)
    spec.loader.exec_module(module)
    return module


def test_docs_are_current() -> None:
    assert _script().main(["--check"]) == 0, "run: python scripts/gen_rule_docs.py"


def test_check_detects_a_stale_page(tmp_path: Path) -> None:
    gen = _script()
    assert gen.main(["--out", str(tmp_path)]) == 0
    assert gen.main(["--check", "--out", str(tmp_path)]) == 0
    page = tmp_path / "TW301.md"
    page.write_text(page.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    assert gen.main(["--check", "--out", str(tmp_path)]) == 1


@pytest.mark.parametrize("code", sorted(RULES))
def test_page_per_rule_matches_explain(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    page = (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    assert page.startswith(f"# {code} {RULES[code].name}\n")
    assert "## Example" in page and "## Use instead" in page and "```python" in page
    assert main(["explain", code]) == 0
    out = capsys.readouterr().out
    assert page.strip() in out


def test_the_readme_rules_table_lists_every_code() -> None:
    """Generated from the registry (``--check`` above keeps it current): it once lacked TW000 and TW304."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- rules-table -->", 1)[1].split("<!-- /rules-table -->", 1)[0]
    listed = [line.split("]")[0].removeprefix("| [") for line in table.splitlines() if line.startswith("| [")]
    assert listed == sorted({"TW000", "TW001", *RULES})
    assert all(f"(docs/rules/{code}.md)" in table for code in listed)
