"""``trainwright lint``: output formats, exit codes, noqa, configuration, excludes, cross-file bases."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trainwright_lint.cli import main

# ruff's record (cell, code, end_location, filename, fix, location, message, name, noqa_row, severity,
# url) plus the class and method the finding is about.
JSON_FIELDS = {
    "cell",
    "code",
    "end_location",
    "filename",
    "fix",
    "location",
    "message",
    "name",
    "noqa_row",
    "severity",
    "url",
    "class",
    "method",
}


def run_lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """One finding per line (``concise``) unless ``args`` ask for a format: these tests read the
    findings as tools do (``test_output_text.py`` has the default layout)."""
    shape = [] if any(a in ("--format", "--output-format") for a in args) else ["--output-format", "concise"]
    status = main(["lint", "--transformers-version", "5.24.0", "-j", "1", *shape, *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def cross_file_project(tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    shutil.copytree(fixtures_dir / "project", root)
    monkeypatch.chdir(root)
    return root


def test_cross_file_project_text_output(cross_file_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _err = run_lint(["."], capsys)
    assert status == 1
    lines = sorted(line.split(" ")[0] + " " + line.split(" ")[1] for line in out.splitlines())
    assert lines == sorted(
        [
            "pkg/broken.py:3:21: TW000",  # does not parse: reported as a diagnostic, not a crash
            "pkg/callbacks.py:5:5: TW401",  # never fired; Derived.on_custom (base defines it) is not reported
            "pkg/callbacks.py:17:9: TW403",
            "pkg/callbacks.py:16:5: TW402",
            "pkg/child.py:5:5: TW101",  # base class in another file, file never says "Trainer"
            "pkg/child.py:5:5: TW301",
            "pkg/mixins.py:2:5: TW101",  # mixin combined with tf.Trainer in combined.py
            "pkg/sub_trainer.py:5:5: TW101",
        ]
    )
    assert "ignored" not in out  # .gitignore'd directory
    assert "pkg/broken.py:3:21: TW000 cannot parse (SyntaxError: " in out  # reported, not a crash


def test_json_output_fields(cross_file_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_lint(["--format", "json", "pkg/child.py", "pkg/base.py"], capsys)
    assert status == 1
    records = json.loads(out)
    assert records and all(set(r) == JSON_FIELDS for r in records)
    first = records[0]
    assert (first["code"], first["name"], first["class"], first["method"]) == (
        "TW101",
        "private-override",
        "Child",
        "_get_train_sampler",
    )
    assert first["filename"] == "pkg/child.py"  # relative to the project root (here: where it runs)
    assert (first["location"], first["end_location"]) == ({"row": 5, "column": 5}, {"row": 5, "column": 27})


def test_clean_exit_zero_and_select_ignore(
    cross_file_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_lint(["pkg/base.py"], capsys)[0] == 0
    status, out, _ = run_lint(["--select", "TW4", "."], capsys)
    assert status == 1 and {line.split()[1] for line in out.splitlines()} == {"TW401", "TW402", "TW403"}
    status, out, _ = run_lint(["--select", "TW4", "--ignore", "TW403,TW40", "."], capsys)
    assert (status, out) == (0, "")
    assert run_lint(["--exit-zero", "."], capsys)[0] == 0


def test_usage_errors_exit_2(cross_file_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_lint(["does/not/exist.py"], capsys)
    assert status == 2 and "does/not/exist.py" in err
    with pytest.raises(SystemExit) as exc:
        run_lint(["--select", "XX1", "."], capsys)
    assert exc.value.code == 2
    (cross_file_project / "pyproject.toml").write_text('[tool.trainwright]\nselekt = ["TW1"]\n')
    status, _, err = run_lint(["."], capsys)
    assert status == 2 and "unknown key(s) selekt" in err


def test_noqa_variants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text(
        "from transformers import Trainer\n\n"
        "class T(Trainer):\n"
        "    def _save_checkpoint(self, model, trial):  # noqa: TW101\n        pass\n\n"
        "    def _prepare_inputs(self, inputs):  # noqa: TW1\n        return inputs\n\n"
        "    def _get_train_sampler(  # noqa\n        self\n    ):\n        return None\n\n"
        "    def _get_eval_sampler(self, eval_dataset):  # noqa: TW301\n        return None\n\n"
        "    def _wrap_model(self, model, training=True, dataloader=None):\n        return model\n"
    )
    status, out, _ = run_lint(["t.py"], capsys)
    assert status == 1
    assert [line.split(" ")[0] for line in out.splitlines()] == [
        "t.py:15:5:",
        "t.py:15:49:",
        "t.py:18:5:",
    ]  # TW301-only noqa keeps TW101, and TW001 says that TW301 silences nothing
    (tmp_path / "t.py").write_text("# flake8: noqa\n" + (tmp_path / "t.py").read_text())
    assert run_lint(["t.py"], capsys)[0] == 0


def test_pyproject_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    body = "from mylib import Runner\n\nclass T(Runner):\n    def _save_checkpoint(self, model, trial):\n        pass\n"
    (tmp_path / "src" / "a.py").write_text(body)
    (tmp_path / "tests" / "b.py").write_text(body)
    (tmp_path / "legacy.py").write_text(body)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.trainwright]\n"
        'trainer-bases = ["mylib.Runner"]\n'
        'select = ["TW1", "TW3"]\n'
        'ignore = ["TW302"]\n'
        'per-file-ignores = { "tests/*" = ["TW1"] }\n'
        'transformers-version = "4.46.3"\n'
        'exclude = ["legacy.py"]\n'
    )
    status, out, err = main(["lint", "-j", "1", "--output-format", "concise", "."]), *capsys.readouterr()
    assert status == 1
    # 4.46.3 passes metrics= to _save_checkpoint: TW301 everywhere, TW101 not under tests/, legacy.py excluded.
    assert [line.split(" ")[:2] for line in out.splitlines()] == [
        ["src/a.py:4:5:", "TW101"],
        ["src/a.py:4:5:", "TW301"],
        ["tests/b.py:4:5:", "TW301"],
    ]
    assert "transformers 4.46.3" in err
    status, out, _ = (
        main(["lint", "-j", "1", "--output-format", "concise", "--transformers-version", "5.24.0", "."]),
        *capsys.readouterr(),
    )
    assert [line.split(" ")[:2] for line in out.splitlines()] == [["src/a.py:4:5:", "TW101"]]
    # A file named on the command line is linted even if excluded (as in ruff); pre-commit names every
    # changed file, so its hook passes --force-exclude.
    status, out, _ = (
        main(["lint", "-j", "1", "--output-format", "concise", "legacy.py"]),
        *capsys.readouterr(),
    )
    assert status == 1 and out.startswith("legacy.py:4:5: TW101")
    status, out, _ = (
        main(["lint", "-j", "1", "--output-format", "concise", "--force-exclude", "legacy.py"]),
        *capsys.readouterr(),
    )
    assert status == 0 and out == ""


def test_parallel_supervised_and_in_process_runs_agree(
    cross_file_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The three ways a run executes give the same findings: the worker pool (several jobs), one
    supervised child (one job with a time limit) and this process (``file_timeout=0``)."""
    from trainwright_lint import runner

    files = [str(p) for p in sorted(cross_file_project.rglob("*.py"))] * 1
    old = runner.PARALLEL_MIN_FILES
    runner.PARALLEL_MIN_FILES = 1
    try:
        from trainwright_lint.configuration import LintConfig

        config = LintConfig(transformers_version="5.24.0", root=cross_file_project)
        supervised = runner.lint_files(files, config, jobs=1)
        parallel = runner.lint_files(files, config, jobs=2).findings
        in_process = runner.lint_files(files, config.with_overrides(file_timeout=0), jobs=1)
    finally:
        runner.PARALLEL_MIN_FILES = old
    assert supervised.findings and supervised.workspace is None and in_process.workspace is not None
    expected = [f.as_dict() for f in supervised.findings]
    assert expected == [f.as_dict() for f in parallel] == [f.as_dict() for f in in_process.findings]
    assert (supervised.files_seen, supervised.files_parsed, supervised.files_linted) == (
        in_process.files_seen,
        in_process.files_parsed,
        in_process.files_linted,
    )


def test_console_script_entry_point(cross_file_project: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainwright_lint",
            "lint",
            "--transformers-version",
            "5.24.0",
            "pkg/child.py",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("pkg/child.py:5:5: TW101 ")
