"""``trainwright lint --format sarif|github`` end to end, TW000 included."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from lint_helpers import DATA
from trainwright_lint.cli import main


def lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["lint", "--transformers-version", "5.24.0", "-j", "1", *args])
    return status, capsys.readouterr().out


def test_sarif_from_the_cli_validates(fix_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = lint(["--format", "sarif", "src"], capsys)
    assert status == 1
    log = json.loads(out)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    results = log["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert all(u.startswith("src/") for u in uris)  # relative to the working directory
    broken = [r for r in results if r["ruleId"] == "TW000"]
    assert len(broken) == 1 and broken[0]["level"] == "error"
    assert broken[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_github_annotations_from_the_cli(fix_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = lint(["--format", "github", "src"], capsys)
    lines = out.splitlines()
    assert status == 1 and lines
    assert all(
        line.startswith(("::warning file=src/", "::error file=src/", "::notice file=src/")) for line in lines
    )
    assert all("TW305" in line for line in lines if line.startswith("::notice "))  # the note-severity rule
    assert any(line.startswith("::error file=src/broken.py,line=2,") for line in lines)


def test_progress_line_on_a_terminal(tmp_path: Path) -> None:
    """More than 50 files and stderr on a terminal: ``linting N/M files...`` updated in place with
    carriage returns, then cleared; nothing of it on stdout or when stderr is not a terminal."""
    import os
    import pty
    import subprocess
    import sys

    for i in range(60):
        (tmp_path / f"m{i}.py").write_text(f"x = {i}\n")
    main_code = "import sys; from trainwright_lint.cli import main; sys.exit(main(sys.argv[1:]))"
    args = [sys.executable, "-c", main_code, "lint", "--transformers-version", "5.24.0", "-j", "1", "."]
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            args, check=False, cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower, timeout=120
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0 and proc.stdout == b""
    assert "\rlinting 50/60 files..." in err and "\rlinting 60/60 files..." in err
    assert "\r\x1b[K" in err  # cleared at the end
    piped = subprocess.run(args, check=True, cwd=tmp_path, capture_output=True, timeout=120)
    assert b"linting" not in piped.stderr
