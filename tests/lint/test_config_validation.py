"""``[tool.trainwright]`` is validated like the command line (exit status 2 naming the file and the key),
and a run that lints nothing, or names excluded paths, says so on stderr without changing the status."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from trainwright_lint.cli import main
from trainwright_lint.rules import RULES

TRAINER = "from transformers import Trainer\n\nclass T(Trainer):\n    def _save_checkpoint(self, model, trial):\n        pass\n"


@pytest.fixture
def trainer_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text(TRAINER)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(
    trainer_project: Path, table: str, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    (trainer_project / "pyproject.toml").write_text(f"[tool.trainwright]\n{table}\n")
    status = main(["lint", "-j", "1", "--transformers-version", "5.24.0", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'select = ["TW999"]',
            '[tool.trainwright] select: "TW999" matches no rule (known: TW000, TW001, TW101, ',
        ),
        ('ignore = ["TW9"]', '[tool.trainwright] ignore: "TW9" matches no rule'),
        (
            'per-file-ignores = { "tests/*" = ["TW5"] }',
            '[tool.trainwright] per-file-ignores "tests/*": "TW5" matches no rule',
        ),
        ('select = ["E501"]', '[tool.trainwright] select: "E501" is not a trainwright code'),
        ("select = 3", "[tool.trainwright] select must be a list of codes"),
        (
            'selekt = ["TW1"]',
            '[tool.trainwright] has unknown key(s) selekt ("selekt": did you mean "select"?)',
        ),
        ('transformers_version = "4.45.2"', 'did you mean "transformers-version"?'),
        (
            'transformers-version = "abc"',
            '[tool.trainwright] transformers-version: "abc" is not a version or a version range',
        ),
        (
            "transformers-version = 4.45",
            '[tool.trainwright] transformers-version must be a string such as "4.57.6" (quote it',
        ),
        ('trl-version = ">=x"', '[tool.trainwright] trl-version: ">=x" is not a version'),
        ("trainer-bases = [1]", "[tool.trainwright] trainer-bases must be a list of strings"),
        ('file-timeout = "soon"', "[tool.trainwright] file-timeout must be a number of seconds"),
        ('per-file-ignores = ["TW1"]', "[tool.trainwright] per-file-ignores must be a table"),
    ],
)
def test_bad_configuration_exits_2_naming_the_file_and_key(
    trainer_project: Path, capsys: pytest.CaptureFixture[str], table: str, message: str
) -> None:
    status, out, err = lint(trainer_project, table, capsys)
    assert status == 2 and out == ""
    assert err.startswith(f"trainwright lint: error: {trainer_project / 'pyproject.toml'}: "), err
    assert message in err


def test_the_known_codes_are_the_rule_registry_plus_tw000(
    trainer_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _status, _, err = lint(trainer_project, 'select = ["TW999"]', capsys)
    assert f"(known: TW000, TW001, {', '.join(sorted(RULES))})" in err
    for table in ('select = ["TW000", "TW1"]', 'select = ["TW0"]', 'ignore = ["TW"]', 'select = "TW1, TW3"'):
        assert lint(trainer_project, table, capsys)[0] in (0, 1), table


def test_a_configured_range_is_a_target(trainer_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (trainer_project / "pyproject.toml").write_text(
        '[tool.trainwright]\ntransformers-version = ">=4.44,<4.46"\n'
    )
    status = main(["lint", "-j", "1"])
    err = capsys.readouterr().err
    assert status == 1
    assert "transformers >=4.44,<4.46 ([tool.trainwright] transformers-version) → 4.44.0–4.45.2" in err


def test_no_python_files_warns_as_ruff_does(
    trainer_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (trainer_project / "empty").mkdir()
    status = main(["lint", "-j", "1", "--transformers-version", "5.24.0", "empty"])
    err = capsys.readouterr().err
    assert status == 0
    assert "trainwright lint: warning: No Python files found under the given path(s)\n" in err
    status = main(["fix", "-j", "1", "--transformers-version", "5.24.0", "empty"])
    assert status == 0 and "trainwright fix: warning: No Python files found" in capsys.readouterr().err


def test_named_excluded_paths_warn_and_keep_the_status(
    trainer_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (trainer_project / "legacy").mkdir()
    (trainer_project / "legacy" / "old.py").write_text(TRAINER)
    (trainer_project / "gen.py").write_text(TRAINER)
    status, out, err = lint(trainer_project, 'exclude = ["legacy/", "gen.py"]', capsys, "legacy")
    assert status == 0 and out == ""
    assert (
        'trainwright lint: warning: excluded, so not linted: legacy ([tool.trainwright] exclude "legacy/"); '
        "name the files in it to lint them anyway\n"
    ) in err
    assert "No Python files found" in err
    # pre-commit names every changed file and the hook passes --force-exclude.
    status, out, err = lint(
        trainer_project, 'exclude = ["legacy/", "gen.py"]', capsys, "--force-exclude", "gen.py", "train.py"
    )
    assert status == 1 and out.startswith("train.py:4:5: TW101")
    assert (
        'excluded, so not linted: gen.py ([tool.trainwright] exclude "gen.py"); name files without --force-exclude'
        in err
    )
    assert "No Python files found" not in err
    # Without --force-exclude a named file is linted (as in ruff): nothing to warn about.
    status, out, err = lint(trainer_project, 'exclude = ["gen.py"]', capsys, "gen.py")
    assert status == 1 and "warning" not in err


def test_a_gitignored_directory_names_the_gitignore(
    trainer_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q", "."], cwd=trainer_project, check=True)
    (trainer_project / ".gitignore").write_text("# generated\nbuild_out/\n")
    (trainer_project / "build_out").mkdir()
    (trainer_project / "build_out" / "x.py").write_text(TRAINER)
    status, _, err = lint(trainer_project, "", capsys, "build_out")
    assert status == 0
    assert 'excluded, so not linted: build_out (.gitignore "build_out/")' in err
