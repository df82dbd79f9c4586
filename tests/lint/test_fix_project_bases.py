"""A TW301 fix is valid against the project's own bases, wherever they live (issue 22, item 2).

The pre-commit case: ``base.py`` defines ``BaseTrainer.compute_loss(self, model, inputs,
return_outputs=False)`` and only ``child.py`` is staged. The fix must make the child accept what the
Trainer passes without forwarding ``num_items_in_batch`` to a base that rejects it (which created a
TW302 and failed training on every release). Each case runs the real CLI on real files in a temporary
project, then binds the fixed code with Python itself: the Trainer's call to the child's signature, and
the child's ``super()`` call to the base's signature.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import GIT, run_pre_commit
from trainwright_lint.cli import main

BASE_REJECTS = """\
from transformers import Trainer


class BaseTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return super().compute_loss(model, inputs, return_outputs)
"""
BASE_TAKES = """\
from transformers import Trainer


class BaseTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)
"""
CHILD = """\
from pkg.base import BaseTrainer


class ChildTrainer(BaseTrainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        loss = super().compute_loss(model, inputs, return_outputs)
        return loss
"""


def _project(root: Path, base: str, spec: str) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\nversion = "0"\ndependencies = ["transformers{spec}"]\n'
    )
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "base.py").write_text(base)
    (root / "pkg" / "child.py").write_text(CHILD)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def _codes(paths: list[str], capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str]]:
    capsys.readouterr()
    main(["lint", "--output-format", "json", "-j", "1", *paths])
    out = capsys.readouterr().out
    return [(Path(f["filename"]).name, f["code"]) for f in json.loads(out)]


def _binds(root: Path) -> None:
    """Import the fixed project for real (with the installed transformers) and bind, with Python's own
    rules, the Trainer's call to the child and the child's ``super().compute_loss(...)`` call, as
    written, to the base. ``bind`` raises ``TypeError`` exactly where the call would."""
    sys.path.insert(0, str(root))
    try:
        child = importlib.import_module("pkg.child")
        base_sig = inspect.signature(child.BaseTrainer.compute_loss)
        child_sig = inspect.signature(child.ChildTrainer.compute_loss)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[name]
    child_sig.bind(None, "model", "inputs", return_outputs=False, num_items_in_batch=4)
    tree = ast.parse((root / "pkg" / "child.py").read_text())
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "compute_loss"
    ]
    assert calls
    for call in calls:
        base_sig.bind(None, *[None] * len(call.args), **{k.arg: None for k in call.keywords if k.arg})


@pytest.mark.train("imports the fixed project with the installed transformers")
@pytest.mark.parametrize("spec", [">=4.46,<5.25", ">=4.36,<5.25"])
def test_fix_of_a_child_never_forwards_to_a_base_in_another_file_that_rejects_it(
    spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "proj", BASE_REJECTS, spec)
    monkeypatch.chdir(root)
    child = root / "pkg" / "child.py"
    assert ("child.py", "TW301") in _codes(["pkg/child.py"], capsys)
    # Unsafe since issue 32 (the base's own loss would no longer be divided by the accumulation steps).
    assert main(["fix", "--unsafe-fixes", "-j", "1", "pkg/child.py"]) in (0, 1)
    fixed = child.read_text()
    assert "num_items_in_batch=None" in fixed  # the child now accepts what the Trainer passes
    assert "num_items_in_batch=num_items_in_batch" not in fixed  # and does not hand it to BaseTrainer
    # The fix created nothing: linting the whole project reports no TW302 and nothing on the child.
    after = _codes(["pkg"], capsys)
    assert ("child.py", "TW302") not in after and ("child.py", "TW301") not in after, after
    assert (root / "pkg" / "base.py").read_text() == BASE_REJECTS  # only the named file was written
    _binds(root)


@pytest.mark.train("imports the fixed project with the installed transformers")
def test_fix_of_a_child_still_forwards_when_the_project_base_takes_the_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "proj", BASE_TAKES, ">=4.46,<5.25")
    monkeypatch.chdir(root)
    child = root / "pkg" / "child.py"
    assert main(["fix", "-j", "1", "pkg/child.py"]) in (0, 1)
    assert "num_items_in_batch=num_items_in_batch" in child.read_text()
    _binds(root)
    assert _codes(["pkg"], capsys) == []


@pytest.mark.slow
def test_the_pre_commit_hook_on_the_staged_child_alone_leaves_code_that_binds(
    tmp_path: Path, pre_commit: str, hook_repo: Path, pre_commit_home: Path
) -> None:
    """The issue's scenario as pre-commit runs it: only ``child.py`` is passed to the hook."""
    root = _project(tmp_path / "proj", BASE_REJECTS, ">=4.46,<5.25")
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True, check=True
    )
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev.stdout.strip()}\n    hooks:\n      - id: trainwright\n"
    )
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    first = run_pre_commit(pre_commit, root, pre_commit_home, "run", "--files", "pkg/child.py")
    output = first.stdout + first.stderr
    # Issue 32: not forwarding to the base's own loss changes the accumulation scaling, so the fix is
    # unsafe and the hook reports the finding with why instead of applying it.
    assert first.returncode == 1 and "files were modified by this hook" not in output, output
    assert "TW301" in output and "adding it alone is unsafe" in " ".join(output.split()), output
    assert "TW302" not in output, output
    assert "num_items_in_batch" not in (root / "pkg" / "child.py").read_text()
    assert (root / "pkg" / "base.py").read_text() == BASE_REJECTS
