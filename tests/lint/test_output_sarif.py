"""``--format sarif``: valid against the official SARIF 2.1.0 schema (vendored as test data), rule
metadata (help page, help URI, tags) for every rule, relative artifact paths, positions passed through."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lint_helpers import DATA, dedent, lint_text
from trainwright_lint.cli import main
from trainwright_lint.output import sarif
from trainwright_lint.output.rule_meta import rule_url
from trainwright_lint.rules import RULES, fixable

SOURCE = dedent(
    """
    from transformers import Trainer, TrainerCallback

    class MyTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            return super().compute_loss(model, inputs, return_outputs)

        def _save_checkpoint(self, model, trial):
            super()._save_checkpoint(model, trial)

    class MyCallback(TrainerCallback):
        def on_log(self, args, state, control, logs=None):
            print(logs)
    """
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


@pytest.fixture
def findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    path = tmp_path / "pkg" / "train me.py"  # a space: the URI must be percent-encoded
    path.write_text(SOURCE, encoding="utf-8")
    found = lint_text(SOURCE, path=str(path))
    assert {f.code for f in found} >= {"TW101", "TW301", "TW402"}
    return found


def test_schema_is_the_official_one() -> None:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert len((DATA / "sarif-schema-2.1.0.json").read_bytes()) == 112768  # oasis-tcs/sarif-spec file


def test_sarif_validates_and_carries_rules(findings, validator) -> None:  # type: ignore[no-untyped-def]
    log = sarif.to_sarif(findings)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert set(RULES) | {"TW000", "TW001"} == set(ids)
    for rule in rules:
        assert rule["helpUri"] == rule_url(rule["id"]) == f"{sarif.RULE_DOCS_BASE_URL}{rule['id']}.md"
        assert rule["shortDescription"]["text"]
        assert rule["help"]["markdown"].startswith(f"# {rule['id']} {rule['name']}\n")
        assert rule["help"]["text"].startswith(f"{rule['id']} {rule['name']}\n")
        assert rule["help"]["text"].rstrip().endswith(rule["helpUri"])
    assert len(run["results"]) == len(findings)
    for result, finding in zip(run["results"], findings):
        assert ids[result["ruleIndex"]] == result["ruleId"] == finding.code
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "pkg/train%20me.py"
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert location["region"]["startLine"] == finding.line
        assert location["region"]["startColumn"] == finding.column
        assert result["message"]["text"] == finding.message


def test_empty_run_is_valid(validator) -> None:  # type: ignore[no-untyped-def]
    log = sarif.to_sarif([])
    assert not list(validator.iter_errors(log))
    assert log["runs"][0]["results"] == []


def test_a_broken_log_is_rejected(findings, validator) -> None:  # type: ignore[no-untyped-def]
    """The schema check can fail: a region with line 0 is invalid SARIF."""
    log = sarif.to_sarif(findings)
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(validator.iter_errors(log))


def test_rule_metadata_comes_from_the_rule() -> None:
    """Short description: the docstring's first sentence; full: its first paragraph; help: the page
    (``Rule.explain()``, the same as docs/rules/); tags: the family and ``fixable``."""
    descriptors = {d["id"]: d for d in sarif.rule_descriptors()}
    root = Path(__file__).resolve().parents[2]
    for code, rule in RULES.items():
        d = descriptors[code]
        first_paragraph = " ".join((rule.__doc__ or "").strip().split("\n\n")[0].split())
        assert d["fullDescription"]["text"] == first_paragraph
        assert first_paragraph.startswith(d["shortDescription"]["text"].rstrip("."))
        assert d["help"]["markdown"] == rule.explain()
        # The URL names the committed page: the path after ``blob/main/`` exists in this repository.
        assert (root / d["helpUri"].split("/blob/main/", 1)[1]).is_file()
        assert "```" not in d["help"]["text"] and "\n# " not in d["help"]["text"]
        tags = d["properties"]["tags"]
        assert ("fixable" in tags) == (code in fixable()), code
        family = {"TW1": "trainer-override", "TW2": "callback", "TW3": "api-drift", "TW4": "callback"}
        assert family[code[:3]] in tags
    assert (root / descriptors["TW000"]["helpUri"].split("/blob/main/", 1)[1]).is_file()
    assert "properties" not in descriptors["TW000"] and descriptors["TW000"]["defaultConfiguration"] == {
        "level": "error"
    }
    assert descriptors["TW401"]["properties"]["tags"] == ["callback", "fixable"]
    assert descriptors["TW101"]["properties"]["tags"] == ["trainer-override", "upgrade"]


def test_markdown_as_text_keeps_code_readable() -> None:
    page = "# TW1 x\n\nSee <https://e.org/1>.\n\n## Flagged\n\n```python\nclass A:\n\n    pass\n```\n"
    assert sarif.markdown_as_text(page) == (
        "TW1 x\n\nSee https://e.org/1.\n\nFlagged\n\n    class A:\n\n        pass\n"
    )


def test_paths_and_srcroot_are_the_project_root_when_run_from_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\nversion = '0'\n", encoding="utf-8")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "train.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(package)
    status = main(["lint", "--format", "sarif", "-j", "1", "--transformers-version", "5.24.0", "train.py"])
    assert status == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"src/pkg/train.py"}
