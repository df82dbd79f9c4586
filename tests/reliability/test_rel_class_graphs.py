"""Hostile class graphs: a cycle of 500 classes and a chain of 2,000, through the project model and the CLI.

The audit: a cyclic chain of about 500 classes crashed the whole run (``RecursionError`` in the project
model, exit 2, every file lost), and a linear chain grew faster than linearly (1,000 classes 2.7 s, 2,000
16.5 s; the times belong to ``benchmarks/lint_scaling.py``, rows ``chain-N`` and ``cycle-500``). Here the
cycle is reported for its classes and the chain completes, both with a recursion limit far below their depth.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from trainwright_lint.project.model import TRAINER, ProjectModel, project_key
from trainwright_lint.project.summary import summarise

LINT = [sys.executable, "-m", "trainwright_lint", "lint", "--transformers-version", "5.24.0", "-j", "1"]


def chain(n: int, cycle: bool = False) -> str:
    """``Level<i>(Level<i-1>)`` for i < n; ``Level0`` derives from ``Trainer``, or with ``cycle`` from the
    last class (closing the cycle). A real trainer that also derives from a class of the cycle comes last."""
    first = f"Level{n - 1}" if cycle else "Trainer"
    lines = ["from transformers import Trainer", "", f"class Level0({first}):", "    pass"]
    for i in range(1, n):
        lines += [f"class Level{i}(Level{i - 1}):", "    pass"]
    lines += [
        f"class Leaf({'Trainer, Level3' if cycle else f'Level{n - 1}'}):",
        "    def _save(self, output_dir=None, state_dict=None):",
        "        return super()._save(output_dir, state_dict)",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def shallow_stack():
    """A recursion limit 60 frames above the test's own depth: a walk that recursed once per class
    (500 or 2,000 of them) would fail at once."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 60)
    yield
    sys.setrecursionlimit(old)


def model_of(source: str, folder: Path) -> tuple[ProjectModel, str]:
    path = str(folder / "train.py")
    tree = ast.parse(source)
    model = ProjectModel(str(folder))
    model.add(summarise(tree, path, source, ("Trainer",)))
    return model, path


def test_the_model_resolves_a_2000_class_chain_without_recursion(tmp_path, shallow_stack):
    model, path = model_of(chain(2000), tmp_path)
    leaf = model.info(project_key(path, "Leaf"))
    assert leaf.role == TRAINER
    trainer_mro = model.info(project_key(path, "Level0")).mro_keys[1:]
    assert leaf.mro_keys == (
        project_key(path, "Leaf"),
        *(project_key(path, f"Level{i}") for i in range(1999, -1, -1)),
        *trainer_mro,
    )
    assert len(model.target_classes(path)) == 2001


def test_the_model_reports_every_class_of_a_500_class_cycle(tmp_path, shallow_stack):
    model, path = model_of(chain(500, cycle=True), tmp_path)
    for i in range(500):
        info = model.info(project_key(path, f"Level{i}"))
        assert info.role is None
        reasons = [why for _, why in info.unresolved]
        assert any("a cycle of bases (Level" in why and "(500 classes)" in why for why in reasons), i
    leaf = model.info(project_key(path, "Leaf"))  # Trainer and a class of the cycle: still a trainer
    assert leaf.role == TRAINER


def test_cli_reports_a_500_class_cycle_and_lints_the_rest(tmp_path):
    (tmp_path / "train.py").write_text(chain(500, cycle=True))
    done = subprocess.run(
        [*LINT, "."], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr  # findings, not a crash (2)
    assert "TW000" not in done.stdout and "Traceback" not in done.stderr
    assert [line.split()[1] for line in done.stdout.splitlines() if ": TW" in line] == ["TW101"]  # Leaf._save
    stats = subprocess.run(
        [*LINT, "--statistics", "--format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    unresolved = json.loads(stats.stdout)["unresolved"]
    assert len(unresolved) == 500
    assert all("a cycle of bases" in u["reason"] for u in unresolved)
    assert all("Python cannot define these classes" in u["reason"] for u in unresolved)


def test_cli_completes_a_2000_class_chain(tmp_path):
    """Completion only (``--file-timeout 0``): how long it takes is the benchmark's business."""
    (tmp_path / "train.py").write_text(chain(2000))
    done = subprocess.run(
        [*LINT, "--file-timeout", "0", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    findings = [line for line in done.stdout.splitlines() if ": TW" in line]
    assert len(findings) == 1 and " TW101 " in findings[0] and findings[0].startswith("train.py:4004:")
