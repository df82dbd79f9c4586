"""``--format sarif``: valid against the official SARIF 2.1.0 schema (vendored as test data), rule
metadata with help URIs for every rule, relative artifact paths, positions passed through."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lint2_support import DATA, dedent, lint_text
from trainwright_lint.output import sarif
from trainwright_lint.rules import RULES

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
    assert set(RULES) | {"TW000"} == set(ids)
    for rule in rules:
        assert rule["helpUri"] == f"{sarif.RULE_DOCS_BASE_URL}{rule['id']}/"
        assert rule["shortDescription"]["text"]
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
