"""``--format json``: ruff's record shape (checked against real ruff), the committed JSON Schema
(``docs/lint-json.schema.json``, checked against real CLI output), and the ``fix`` record."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from trainwright_lint.cli import main
from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import rule_of
from trainwright_lint.output import fix_record, json_format
from trainwright_lint.output.rule_meta import RULE_DOCS_BASE_URL, rule_url
from trainwright_lint.rules import RULES
from trainwright_lint.rules.tw301_incompatible_signature import AddParams, NewParam
from trainwright_lint.rules.tw302_stale_super_call import DropArgs
from trainwright_lint.rules.tw303_removed_api import RenameSelfAttribute
from trainwright_lint.rules.tw401_unknown_event import RenameMethod
from trainwright_lint.rules.tw402_event_without_kwargs import AddVarKeyword

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "lint-json.schema.json").read_text(encoding="utf-8"))
NIB = NewParam(name="num_items_in_batch", default="None", position=3)


def finding(code: str = "TW301", fix: object = None, **overrides: Any) -> Finding:
    fields: dict[str, Any] = {
        "code": code,
        "name": "incompatible-signature",
        "message": "m",
        "path": "src/train.py",
        "line": 4,
        "column": 5,
        "end_line": 4,
        "end_column": 17,
        "class_name": "MyTrainer",
        "method": "compute_loss",
        "fix": fix,
    }
    return Finding(**{**fields, **overrides})


# One finding per edit type the fixer applies (as the rules attach them), and one without a fix.
FINDINGS = [
    finding("TW301", AddParams(method="compute_loss", line=4, params=(NIB,), forward=(NIB,))),
    finding(
        "TW302", DropArgs("_save_checkpoint", 8, drop_self=True, keywords=("metrics",), keep_positional=None)
    ),
    finding("TW303", RenameSelfAttribute(line=11, old="tokenizer", new="processing_class")),
    finding("TW402", AddVarKeyword(method="on_log", line=15)),
    finding("TW401", RenameMethod(method="on_batch_end", line=17, new="on_step_end")),
    finding("TW101", name="private-override"),
]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def records(findings: list[Finding]) -> list[dict[str, Any]]:
    stream = io.StringIO()
    json_format.render(findings, stream)
    return json.loads(stream.getvalue())


def test_cli_output_validates_against_the_committed_schema(
    fix_project: Path, capsys: pytest.CaptureFixture[str], validator: jsonschema.Draft202012Validator
) -> None:
    status = main(["lint", "--transformers-version", "5.24.0", "-j", "1", "--format", "json", "src"])
    out = json.loads(capsys.readouterr().out)
    assert status == 1 and len(out) >= 6
    errors = list(validator.iter_errors(out))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert all(not Path(r["filename"]).is_absolute() for r in out)  # as the engine names it: relative
    assert all(r["url"] == f"{RULE_DOCS_BASE_URL}{r['code']}.md" for r in out)
    broken = next(r for r in out if r["code"] == "TW000")
    assert (broken["severity"], broken["location"]["row"]) == ("error", 2)
    assert broken["filename"].endswith("broken.py")
    assert {r["severity"] for r in out if r["code"] not in ("TW000", "TW305")} == {"warning"}
    assert {r["severity"] for r in out if r["code"] == "TW305"} <= {"note"}  # the lower-severity rule


def test_records_with_fixes_validate_and_say_what_the_fix_does(
    validator: jsonschema.Draft202012Validator,
) -> None:
    found = records(FINDINGS)
    assert not list(validator.iter_errors(found))
    fixes = {r["code"]: r["fix"] for r in found}
    assert fixes["TW101"] is None
    assert fixes["TW301"] == {
        "applicability": "safe",
        "edits": [],
        "message": "Add `num_items_in_batch=None` to `compute_loss` and pass `num_items_in_batch` on to "
        "`super().compute_loss()`",
    }
    assert (
        fixes["TW302"]["message"]
        == "Remove the explicit `self` and `metrics=` from `super()._save_checkpoint()`"
    )
    assert fixes["TW303"]["message"] == "Replace `self.tokenizer` with `self.processing_class`"
    assert fixes["TW402"]["message"] == "Add `**kwargs` to `on_log`"
    assert fixes["TW401"] == {
        "applicability": "unsafe",
        "edits": [],
        "message": "Rename `on_batch_end` to `on_step_end`",
    }


def test_record_fields_and_positions() -> None:
    f = finding(
        "TW101", name="private-override", method="_m", line=3, end_line=4, end_column=9, noqa_lines=(3, 5)
    )
    assert json_format.record(f) == {
        "cell": None,
        "code": "TW101",
        "end_location": {"column": 9, "row": 4},
        "filename": "src/train.py",
        "fix": None,
        "location": {"column": 5, "row": 3},
        "message": "m",
        "name": "private-override",
        "noqa_row": 3,
        "severity": "warning",
        "url": rule_url("TW101"),
        "class": "MyTrainer",
        "method": "_m",
    }
    assert json_format.noqa_row(finding(line=7, noqa_lines=(5, 6))) == 5  # outside: the logical line's first


def test_the_schema_can_fail(validator: jsonschema.Draft202012Validator) -> None:
    good = records(FINDINGS)[0]
    assert not list(validator.iter_errors([good]))
    for broken in (
        {**good, "url": None},
        {**good, "location": {"row": 0, "column": 1}},
        {**good, "fix": {"applicability": "maybe", "message": "x", "edits": []}},
        {k: v for k, v in good.items() if k != "noqa_row"},
        {**good, "path": "the old field name"},
    ):
        assert list(validator.iter_errors([broken])), broken


def _ruff() -> str | None:
    beside = Path(sys.executable).parent / "ruff"
    return str(beside) if beside.exists() else shutil.which("ruff")


@pytest.mark.skipif(_ruff() is None, reason="ruff is part of the dev extra")
def test_field_names_are_a_superset_of_ruffs(tmp_path: Path) -> None:
    """Run real ruff on a real file (a fixable and an unfixable finding) and compare key sets at every
    level ruff has: the record, its positions, its fix and the fix's edits (against our schema)."""
    path = tmp_path / "sample.py"
    path.write_text("import os\n\n\ndef f():\n    l = 1\n", encoding="utf-8")
    result = subprocess.run(
        [_ruff(), "check", "--isolated", "--select", "F401,E741", "--output-format", "json", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    theirs = json.loads(result.stdout)
    assert {r["code"] for r in theirs} == {"F401", "E741"}, result.stderr
    ours = records(FINDINGS)[0]
    assert ours["fix"] is not None
    for record in theirs:
        assert set(record) <= set(ours), set(record) - set(ours)
        for key in ("location", "end_location"):
            assert set(record[key]) == set(ours[key])
        if record["fix"] is not None:
            assert set(record["fix"]) == set(ours["fix"])
            for edit in record["fix"]["edits"]:
                assert set(edit) == set(SCHEMA["$defs"]["edit"]["required"])
                assert set(edit["location"]) == set(SCHEMA["$defs"]["position"]["required"])
            assert (
                record["fix"]["applicability"]
                in SCHEMA["$defs"]["fix"]["properties"]["applicability"]["enum"]
            )
        assert record["severity"] in SCHEMA["$defs"]["finding"]["properties"]["severity"]["enum"]


def test_every_edit_type_the_fixer_applies_has_a_message() -> None:
    """Each edit type belongs to a fixable rule (defined in its module, so ``fixes`` finds the rule
    and its ``fix_module`` from the edit) and describes itself: the JSON record's message and
    applicability come from the edit."""
    # A shared edit type (the TW201/TW202 move, ``rules/_move.py``) is subclassed in each rule's module.
    kinds = [k for k in Edit.__subclasses__() if not k.__subclasses__()]
    kinds += [sub for k in Edit.__subclasses__() for sub in k.__subclasses__()]
    assert {k.__module__ for k in kinds} == {r.__module__ for r in RULES.values() if r.fix_module}
    for kind in kinds:
        assert kind.describe is not Edit.describe, kind
    fix = AddVarKeyword(method="on_log", line=3)
    assert rule_of(fix) is RULES["TW402"] and fix_record.fix_record(fix) == {
        "applicability": "safe",
        "edits": [],
        "message": "Add `**kwargs` to `on_log`",
    }


@dataclass(frozen=True)
class SpanEdit:
    content: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Suggestion:
    message: str
    edits: tuple[SpanEdit, ...]


def test_fix_objects_beyond_todays_edits() -> None:
    """A fix the fixer does not apply is display-only; explicit spans become ruff's edits."""
    fix = Suggestion("Move it to a callback", (SpanEdit("pass", 2, 5, 2, 9),))
    assert fix_record.fix_record(fix) == {
        "applicability": "display-only",
        "edits": [
            {"content": "pass", "end_location": {"column": 9, "row": 2}, "location": {"column": 5, "row": 2}}
        ],
        "message": "Move it to a callback",
    }
    assert not fix_record.has_safe_fix(fix) and not fix_record.has_safe_fix(None)
    assert fix_record.has_safe_fix(FINDINGS[0].fix) and not fix_record.has_safe_fix(FINDINGS[4].fix)
    assert fix_record.fix_record(None) is None
