"""Two ways lint and fix disagreed with the user, or with each other:

- the fix summary counted passes, not findings: one TW301 fixed over a range in two passes (TW301
  adds `start_time`, TW302 then drops it where the range rejects it) said "fixed 2 findings";
- a file Python cannot decode was linted under a guessed encoding (latin-1) while ``fix`` refused
  it, and a UTF-16 file was skipped without a word. Both are now TW000, in lint as in fix.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import GIT

LOG = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def log(self, logs):\n        super().log(logs)\n"
TRAINER = (
    "from transformers import Trainer\n\n\nclass T(Trainer):\n"
    "    def compute_loss(self, model, inputs, return_outputs=False):\n"
    "        x = 'caf\u00e9'\n"
    "        return super().compute_loss(model, inputs, return_outputs)\n"
)


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainwright_lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_one_finding_fixed_in_two_passes_counts_once(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(LOG)
    before = run(tmp_path, "lint", "--output-format", "concise", "--transformers-version", ">=4.46", ".")
    assert before.stdout.count("[*]") == 1, before.stdout
    fixed = run(tmp_path, "fix", "--transformers-version", ">=4.46", ".")
    assert "fixed 1 finding in 1 file; 0 left" in fixed.stderr, fixed.stderr
    assert "def log(self, logs, start_time=None):" in (tmp_path / "t.py").read_text()
    again = run(tmp_path, "lint", "--transformers-version", ">=4.46", ".")
    assert again.returncode == 0, again.stdout


def test_lint_fix_reports_the_same_count(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(LOG)
    result = run(tmp_path, "lint", "--fix", "--transformers-version", ">=4.46", ".")
    assert "fixed 1 finding in 1 file" in result.stderr and result.returncode == 0


ENCODINGS = {
    "utf8.py": (TRAINER.encode("utf-8"), None),
    "utf8_bom.py": (b"\xef\xbb\xbf" + TRAINER.encode("utf-8"), None),
    "latin1_declared.py": (("# -*- coding: latin-1 -*-\n" + TRAINER).encode("latin-1"), None),
    "latin1_undeclared.py": (TRAINER.encode("latin-1"), "byte 0xe9 at offset"),
    "utf16_bom.py": (TRAINER.encode("utf-16"), "UTF-16"),
    "utf16_no_bom.py": (TRAINER.encode("utf-16-le"), "UTF-16"),
}


@pytest.fixture
def encoded(tmp_path: Path) -> Path:
    for name, (data, _) in ENCODINGS.items():
        (tmp_path / name).write_bytes(data)
    subprocess.run([*GIT, "init", "-q", "."], cwd=tmp_path, check=True)
    return tmp_path


def test_lint_and_fix_agree_on_every_encoding(encoded: Path) -> None:
    lint = run(encoded, "lint", "--output-format", "concise", "--transformers-version", "5.24.0", ".")
    by_file: dict[str, list[str]] = {}
    for line in lint.stdout.splitlines():
        by_file.setdefault(line.split(":", 1)[0], []).append(line)
    fix = run(encoded, "fix", "--transformers-version", "5.24.0", ".")
    for name, (data, problem) in ENCODINGS.items():
        lines = by_file.get(name, [])
        if problem is None:  # linted, and fixed
            assert [line.split(" ")[1] for line in lines] == ["TW301"], (name, lines)
            fixed = (encoded / name).read_bytes()
            assert fixed != data and b"num_items_in_batch=None" in fixed
            assert fixed.startswith(data[:3])  # BOM and coding line kept
        else:  # reported by lint, untouched by fix: never linted under a guess, never skipped silently
            (line,) = lines
            assert ": TW000 cannot decode" in line and problem in line, line
            assert (encoded / name).read_bytes() == data, name
    assert "Traceback" not in lint.stderr + fix.stderr


def test_a_fix_the_declared_codec_cannot_write_is_refused_by_name(tmp_path: Path) -> None:
    """The ``idna`` codec raises a bare ``UnicodeError`` (no ``reason``) for a label over 63 characters:
    adding ``**kwargs`` makes the ``def`` line's label (the text between two dots) too long. The fixer
    crashed with an AttributeError there; it now refuses the file by name and leaves it untouched."""
    source = (
        "# coding: idna\nfrom transformers import TrainerCallback  # .\nclass C(TrainerCallback):  # .\n"
        "    def on_log(self, args, state, control, logs):  # .\n        print(logs)  # .\n"
    )
    data = source.encode("idna")
    (tmp_path / "cb.py").write_bytes(data)
    fixed = run(tmp_path, "fix", "--transformers-version", "5.24.0", "cb.py")
    assert "Traceback" not in fixed.stderr, fixed.stderr
    assert "the fixed text cannot be written as idna (" in fixed.stderr and fixed.returncode == 2
    assert (tmp_path / "cb.py").read_bytes() == data
