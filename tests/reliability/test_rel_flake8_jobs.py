"""flake8's findings do not depend on ``-j``, nor on which files one flake8 process linted before.

The audit: the plugin kept one project model per process, so a folder gave three TW101 findings with
``-j 1`` that neither ``-j 2``, the file alone, nor ``trainwright lint`` gave. The folder here is that
case: ``a_scratch.py`` (ignored by git, so ``trainwright lint`` skips it; flake8 does not) combines a
mixin of ``z_mixins.py`` with ``Trainer``; flake8 with ``-j 1`` lints it first, and the shared model
then made the mixin's three private overrides findings in ``z_mixins.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "lint" / "fixtures" / "fix"

SCRATCH = """\
from transformers import Trainer

from z_mixins import SaveMixin


class ScratchTrainer(SaveMixin, Trainer):
    pass
"""

MIXINS = """\
from transformers import Trainer


class SaveMixin:
    def _save(self, output_dir=None, state_dict=None):
        return super()._save(output_dir, state_dict)

    def _load_from_checkpoint(self, resume_from_checkpoint, model=None):
        return super()._load_from_checkpoint(resume_from_checkpoint, model)

    def _get_train_sampler(self, train_dataset=None):
        return None


class PlainTrainer(Trainer):
    pass
"""


def project(root: Path) -> list[str]:
    (root / "pyproject.toml").write_text("")
    (root / ".gitignore").write_text("a_scratch.py\n")
    (root / "a_scratch.py").write_text(SCRATCH)
    (root / "z_mixins.py").write_text(MIXINS)
    (root / "m_loss.py").write_bytes((FIXTURES / "tw301_compute_loss.before.py").read_bytes())  # one TW301
    return ["a_scratch.py", "m_loss.py", "z_mixins.py"]


def findings(output: str) -> set[str]:
    """``path:line:col: CODE`` of every TW finding, whichever front end printed it."""
    out = set()
    for line in output.splitlines():
        head, _, rest = line.partition(": ")
        if rest.startswith("TW"):
            out.add(f"{head.removeprefix('./')}: {rest.split()[0]}")
    return out


def flake8(root: Path, *args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TW", "--tw-transformers-version", "5.24.0", *args],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "internal error" not in done.stderr, done.stderr
    return findings(done.stdout)


def test_flake8_jobs_file_alone_and_trainwright_lint_agree(tmp_path):
    files = project(tmp_path)
    one_job = flake8(tmp_path, "-j", "1", ".")
    two_jobs = flake8(tmp_path, "-j", "2", ".")
    alone = set().union(*(flake8(tmp_path, name) for name in files))
    lint = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "--transformers-version", "5.24.0", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert one_job == two_jobs == alone == findings(lint.stdout) == {"m_loss.py:6:5: TW301"}


def test_the_order_flake8_sees_files_in_does_not_matter(tmp_path):
    """The plugin in one process over the same files in both orders (what ``-j 1`` does, either way)."""
    import ast

    from trainwright_lint.flake8_plugin import TrainwrightChecker

    files = project(tmp_path)
    before = TrainwrightChecker.transformers_version
    TrainwrightChecker.transformers_version = "5.24.0"
    try:
        results = []
        for order in (files, files[::-1]):
            TrainwrightChecker._parsed.clear()  # a fresh process
            seen = set()
            for name in order:
                source = (tmp_path / name).read_text()
                checker = TrainwrightChecker(ast.parse(source), source.splitlines(True), str(tmp_path / name))
                seen |= {(name, line, text.split()[0]) for line, _, text, _ in checker.run()}
            results.append(seen)
    finally:
        TrainwrightChecker.transformers_version = before
    assert results[0] == results[1] == {("m_loss.py", 6, "TW301")}
