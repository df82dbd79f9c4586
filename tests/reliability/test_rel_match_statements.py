"""``match`` statements and the other nodes ``ast`` gives no position, in every place the linter looks.

The audit: a ``match`` statement in a Trainer method gave TW000 (``'match_case' object has no attribute
'lineno'``) and ``fix`` skipped the file. ``ast`` gives no ``lineno`` to ``match_case``, ``comprehension``,
``arguments`` and ``withitem`` (and to ``keyword`` / ``alias`` before Python 3.9 / 3.10, below this project's
range); the project holds them all, inside Trainer overrides and callback events, with findings and a fix
inside ``case`` clauses, and classes defined in ``case`` clauses and ``except`` handlers.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SOURCE = """\
import time

from transformers import Trainer, TrainerCallback

match time.time():
    case 0:
        class CaseTrainer(Trainer):  # a class defined in a case clause at module level
            def _save(self, output_dir=None, state_dict=None):
                return super()._save(output_dir, state_dict)
    case _:
        pass


def factory(kind):
    match kind:
        case "a":
            class LocalTrainer(Trainer):  # in a case clause inside a function
                def _save(self, output_dir=None, state_dict=None):
                    return super()._save(output_dir, state_dict)
            return LocalTrainer
    try:
        pass
    except ValueError:
        class HandlerTrainer(Trainer):  # in an except handler inside a function
            def _save(self, output_dir=None, state_dict=None):
                return super()._save(output_dir, state_dict)
        return HandlerTrainer


class MatchTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        match inputs:
            case {"labels": labels} if [t for t in labels if t is not None]:
                tok = self.tokenizer
            case [first, *rest]:
                tok = (lambda x, *a, k=1, **kw: x)(first, k=2)
            case Point(x=0, y=yy) | Point(x=yy, y=0):
                with open("a") as f, open("b") as g:
                    tok = {k: v for k, v in zip(f, g)}
            case _:
                tok = None
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        match self.state.global_step % 100:
            case 0:
                print("step", time.time())
        return loss


class MatchCallback(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        match state.global_step:
            case 10:
                control.should_save = True
                return control
            case _:
                return None
"""

LINT = [sys.executable, "-m", "trainwright_lint"]


def positionless_node_types() -> set[type]:
    """The node types of this Python that carry no line number (modules aside)."""
    found = set()
    for name in dir(ast):
        kind = getattr(ast, name)
        if not (isinstance(kind, type) and issubclass(kind, ast.AST)) or issubclass(kind, ast.mod):
            continue
        if kind._fields and "lineno" not in kind._attributes and "lineno" not in kind._fields:
            found.add(kind)
    return found


def test_the_project_holds_every_node_type_without_a_position():
    """The control: what this Python lacks positions for is all in the project (a new Python adding one
    fails here, so the project is extended with it)."""
    present = {type(node) for node in ast.walk(ast.parse(SOURCE))}
    missing = positionless_node_types() - present
    assert not missing, sorted(kind.__name__ for kind in missing)
    assert ast.match_case in positionless_node_types()


def run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    # --preview: TW201 findings in `training_step` can be a preview variant of the rule (``preview_variants``)
    return subprocess.run(
        [*LINT, command, "--preview", "--transformers-version", "5.24.0", "."],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_match_statements_are_linted_and_fixed(tmp_path):
    (tmp_path / "train.py").write_text(SOURCE)
    lint = run("lint", tmp_path)
    assert "TW000" not in lint.stdout and "internal error" not in lint.stdout + lint.stderr, lint.stdout
    found = {(line.split(":")[1], line.split()[1]) for line in lint.stdout.splitlines() if ": TW" in line}
    assert found == {
        ("8", "TW101"),  # a class in a module-level case clause
        ("18", "TW101"),  # a class in a case clause inside a function
        ("25", "TW101"),  # a class in an except handler inside a function
        ("34", "TW303"),  # self.tokenizer in a guarded mapping-pattern case, fixable
        ("38", "TW201"),  # file output in a case clause around super()
        ("48", "TW201"),  # a clock read and print in a case clause
    }, lint.stdout
    fix = run("fix", tmp_path)
    assert "fixed 1 finding in 1 file" in fix.stderr, fix.stderr
    fixed = (tmp_path / "train.py").read_text()
    assert fixed == SOURCE.replace("tok = self.tokenizer", "tok = self.processing_class")
    assert "TW303" not in run("lint", tmp_path).stdout
