"""Issue 21: one configuration package with one target resolution. The CLI, the flake8 plugin,
in-memory lint and ``hooks``/``explain`` resolve a project's pin through ``configuration.resolve``,
so the same pin means the same releases, with the same warning, whichever front end reads it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import ROOT, TRAINER_HEAD
from trainwright_lint.configuration import LintConfig, targets_of

PLUGIN = ROOT / "plugin" / "trainwright_lint"
WARNING = "transformers ==4.46.2 (requirements.txt) is not a catalogued release; checking 4.46.1"


def test_nothing_outside_the_package_resolves_a_target() -> None:
    """``resolve_project_target`` is called by ``configuration`` alone (and by ``upgrade`` for ``--to``,
    the one release a project moves to, which is not the project's target); the catalogue's silent
    ``target_version`` is called by no front end."""
    callers = set()
    for path in PLUGIN.rglob("*.py"):
        if "configuration" in path.relative_to(PLUGIN).parts:
            continue
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name in ("resolve_project_target", "target_version"):
                    callers.add((path.relative_to(PLUGIN).as_posix(), name))
    assert callers == {("upgrade.py", "resolve_project_target")}
    assert not (PLUGIN / "config.py").exists() and not (PLUGIN / "settings.py").exists()
    assert not (PLUGIN / "target.py").exists()


@pytest.fixture
def requirements_project(tmp_path: Path) -> Path:
    (tmp_path / "requirements.txt").write_text("transformers==4.46.2\n")
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = p\n")
    (tmp_path / "train.py").write_text(
        TRAINER_HEAD + "    def _save_checkpoint(self, model, trial):\n        pass\n"
    )
    return tmp_path


def run(requirements_project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv], cwd=requirements_project, capture_output=True, text=True, check=False
    )


def test_every_front_end_reads_the_pin_the_same_way(requirements_project: Path) -> None:
    cli = run(requirements_project, "trainwright_lint", "lint", "train.py")
    assert cli.stderr.count(WARNING) == 1 and "(requirements.txt) → 4.46.1" in cli.stderr
    flake8 = run(requirements_project, "flake8", "--select", "TW", "train.py")
    assert flake8.stderr.count(WARNING) == 1
    assert [line.split(" ")[1] for line in flake8.stdout.splitlines()] == [
        line.split(" ")[1]
        for line in run(
            requirements_project, "trainwright_lint", "lint", "--output-format", "concise", "train.py"
        ).stdout.splitlines()
    ]
    hooks = run(requirements_project, "trainwright_lint", "hooks", "--format", "json")
    assert hooks.stderr.count(WARNING) == 1
    explain = run(requirements_project, "trainwright_lint", "explain", "compute_loss", "--format", "json")
    assert '"releases": [\n      "4.46.1"\n    ]' in explain.stdout


def test_in_memory_lint_resolves_a_version_as_an_option_would() -> None:
    targets = targets_of(LintConfig(transformers_version="4.46.2"))
    assert targets.transformers.releases == ("4.46.1",)
    assert "4.46.2 (transformers_version) is not a catalogued release; checking 4.46.1" in targets.warnings[0]
    with pytest.raises(ValueError, match="outside the catalogue"):
        targets_of(LintConfig(transformers_version="9.9.9"))
