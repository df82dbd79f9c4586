"""Helpers for the linter tests: lint and fix code snippets in memory, build pathological files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from trainwright_lint.configuration import LintConfig
from trainwright_lint.driver import relinter
from trainwright_lint.engine import lint_source, single_file_workspace
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import FixOutcome, fix_bytes

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.email=test@example.com", "-c", "user.name=test", "-c", "init.defaultBranch=main"]


def snapshot_hook_repo(repo: Path) -> Path:
    """This checkout committed as its own git repository at ``repo``, for ``pre-commit try-repo``
    (the working tree may hold uncommitted files, which pre-commit would not see)."""
    repo.mkdir(parents=True, exist_ok=True)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, repo / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", repo / "src", ignore=ignore)
    shutil.copytree(ROOT / "plugin", repo / "plugin", ignore=ignore)
    subprocess.run([*GIT, "init", "-q", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "snapshot"], cwd=repo, check=True)
    return repo


def run_pre_commit(pre_commit: str, repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit <args> --verbose`` in ``repo`` with ``home`` as its cache, in an environment that
    nothing of this interpreter's leaks into (PYTHONPATH, VIRTUAL_ENV, GIT_DIR of a hook run)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PRE_COMMIT", "GIT_", "PYTHON")) and k != "VIRTUAL_ENV"
    }
    env.update(PRE_COMMIT_HOME=str(home), PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [pre_commit, *args, "--verbose"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )


def lint_snippet(
    code: str,
    version: str | None = None,
    select: Sequence[str] = (),
    trainer_bases: Sequence[str] = (),
) -> list[Finding]:
    config = LintConfig(
        select=tuple(select), transformers_version=version, trainer_bases=tuple(trainer_bases), preview=True
    )
    return lint_source(textwrap.dedent(code).lstrip("\n"), "snippet.py", config)


def codes(findings: Sequence[Finding]) -> list[str]:
    return [f.code for f in findings]


DATA = Path(__file__).parent / "data"
TARGET = "5.24.0"


def config(version: str = TARGET, **overrides: object) -> LintConfig:
    return LintConfig(transformers_version=version, **overrides)  # type: ignore[arg-type]


def dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def file_linter(path: str, version: str = TARGET, preview: bool = False):  # type: ignore[no-untyped-def]
    """``lint(code[, tree])`` for one file, as ``trainwright fix`` re-lints it between passes."""
    cfg = config(version, preview=preview)
    return relinter(path, cfg, single_file_workspace(path, cfg))


def lint_text(
    code: str, path: str = "snippet.py", version: str = TARGET, preview: bool = False
) -> list[Finding]:
    return file_linter(path, version, preview)(code)


def fix_text(
    code: str | bytes, path: str = "snippet.py", version: str = TARGET, unsafe: bool = False
) -> FixOutcome:
    """``trainwright fix`` on ``code``; ``unsafe`` is ``--unsafe-fixes --preview``: every move the planner
    writes, those of preview variants (``Rule.preview_variants``) too, so a test of a move is never passed
    by a variant that is merely off by default (``test_preview_variants.py`` tests the default)."""
    data = code.encode("utf-8") if isinstance(code, str) else code
    return fix_bytes(data, path, file_linter(path, version, unsafe), unsafe=unsafe)


TRAINER_HEAD = "from transformers import Trainer\n\n\nclass T(Trainer):\n"


def pathological_files() -> dict[str, bytes]:
    """Files a linter meets in the wild, each mentioning a Trainer subclass so that it is parsed."""
    deep_parens = "(" * 190 + "1" + ")" * 190
    deep_blocks = "".join("    " * (i + 1) + f"if x{i}:\n" for i in range(90)) + "    " * 91 + "pass\n"
    long_chain = " + ".join(["self.state.global_step"] * 20000)
    return {
        "syntax_error.py": (
            TRAINER_HEAD + "    def compute_loss(self, model, inputs:\n        return 1\n"
        ).encode(),
        "python2.py": (TRAINER_HEAD + "    def log(self, logs):\n        print 'step', logs\n").encode(),
        "latin1_declared.py": b"# -*- coding: latin-1 -*-\n"
        + TRAINER_HEAD.encode()
        + b"    def log(self, logs):\n        print('\xe9t\xe9', logs)\n",
        "invalid_utf8.py": TRAINER_HEAD.encode() + b"    def log(self, logs):\n        x = '\xff\xfe\xfa'\n",
        "nul_bytes.py": TRAINER_HEAD.encode() + b"    def log(self, logs):\n        x = 1\x00\n",
        "deep_parens.py": (
            TRAINER_HEAD + f"    def log(self, logs, start_time=None):\n        x = {deep_parens}\n"
        ).encode(),
        "deep_blocks.py": (
            TRAINER_HEAD
            + "    def log(self, logs, start_time=None):\n"
            + "    "
            + deep_blocks.replace("\n", "\n    ")
        )
        .rstrip(" ")
        .encode(),
        "long_expression.py": (
            TRAINER_HEAD
            + f"    def training_step(self, model, inputs):\n        if {long_chain} > 0:\n            print(1)\n"
        ).encode(),
        "huge_10mb.py": (
            TRAINER_HEAD
            + "    def _save_checkpoint(self, model, trial):\n        pass\n\n"
            + "".join(
                f"value_{i} = {i}  # filler line to reach ten megabytes of source\n" for i in range(180_000)
            )
        ).encode(),
        "empty.py": b"",
        "only_bom.py": b"\xef\xbb\xbf",
        "crlf_old_mac.py": (TRAINER_HEAD + "    def log(self, logs):\n        pass\n")
        .replace("\n", "\r")
        .encode(),
    }


# A trainer whose findings depend on the transformers release: fine on 4.45 (its Trainer passes no
# num_items_in_batch, and self.tokenizer exists); TW301 (compute_loss) and TW303 (self.tokenizer) on 5.x;
# the private override is TW101 on every release. The target-selection tests lint it under each pin.
VERSION_SENSITIVE_TRAINER = """\
from transformers import Trainer


class T(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        pad = self.tokenizer.pad_token_id
        return super().compute_loss(model, inputs, return_outputs)

    def _save_checkpoint(self, *args, **kwargs):
        pass
"""


def run_cli(
    cwd: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``trainwright ARGS`` in a fresh process at ``cwd`` (text in and out, never raising on its status)."""
    return subprocess.run(
        [sys.executable, "-m", "trainwright_lint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def read_pty(leader: int) -> bytes:
    """Everything a child wrote to the other side of the pseudo-terminal ``leader`` until it closed it
    (read while it runs: its output can be larger than the pty's buffer); closes ``leader``."""
    chunks = []
    try:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
    return b"".join(chunks)
