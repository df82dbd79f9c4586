"""Shared helpers for the tests of the linter's fixes, outputs, rule docs and robustness."""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainwright_lint.config import LintConfig
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import FixOutcome, config_linter, fix_bytes

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
DATA = HERE / "data"
TARGET = "5.24.0"


def config(version: str = TARGET, **overrides: object) -> LintConfig:
    return LintConfig(transformers_version=version, **overrides)  # type: ignore[arg-type]


def dedent(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def lint_text(code: str, path: str = "snippet.py", version: str = TARGET) -> list[Finding]:
    return config_linter(path, config(version))(code)


def fix_text(
    code: str | bytes, path: str = "snippet.py", version: str = TARGET, unsafe: bool = False
) -> FixOutcome:
    data = code.encode("utf-8") if isinstance(code, str) else code
    return fix_bytes(data, path, config_linter(path, config(version)), unsafe=unsafe)


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
