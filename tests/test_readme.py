"""README.md is a front door: it opens with the two commands ``.ci/run`` reads, then what the project
is, install, "lint your repo", pre-commit and the rules, in about 120 lines; the benchmark record is in
docs/benchmarks.md. The sample output it shows is what ``trainwright lint`` prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def block_after(marker: str) -> str:
    return README.split(marker, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0].strip()


def test_it_opens_with_the_main_and_test_commands() -> None:
    first_section = README.split("\n## ", 1)[0]
    assert "<!-- main-command -->" in first_section and "<!-- test-command -->" in first_section
    assert block_after("<!-- main-command -->").endswith(".venv/bin/python examples/tour.py")
    assert block_after("<!-- test-command -->").endswith(".venv/bin/python -m pytest -n 2")


def test_ci_reads_the_test_command_out_of_it() -> None:
    """The extraction ``.ci/run`` does, run on this README."""
    awk = r"/<!-- test-command -->/{grab=1; next} grab && /^```/{if (inblock) exit; inblock=1; next} grab && inblock"
    found = subprocess.run(
        ["awk", awk, "README.md"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == block_after("<!-- test-command -->")


def test_a_front_door_not_a_diary() -> None:
    assert len(README.splitlines()) <= 125
    headings = re.findall(r"^## (.+)$", README, re.MULTILINE)
    assert headings[:4] == ["Install", "Lint your repo", "pre-commit", "Rules"]
    assert "sec_per_step" not in README and "UTC" not in README  # the measurements live in docs/benchmarks.md
    (summary,) = [line for line in README.splitlines() if line.startswith("**Benchmarks**")]
    assert "(docs/benchmarks.md)" in README.split("**Benchmarks**", 1)[1].split("\n\n", 1)[0]
    assert summary
    assert "sec_per_step" in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")


def test_the_sample_output_is_what_lint_prints(tmp_path: Path) -> None:
    """The "Lint your repo" block, reproduced: the gallery's 4.45-era loss in a project pinned to
    ``>=4.44,<4.48``, at 100 columns."""
    shown = README.split("## Lint your repo", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    project = tmp_path / "your-project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\ndependencies = ["transformers>=4.44,<4.48"]\n'
    )
    shutil.copy(ROOT / "examples" / "gallery" / "legacy_loss_before.py", project / "src" / "train.py")
    subprocess.run(["git", "init", "-q", "."], cwd=project, check=True)
    env = {**os.environ, "COLUMNS": "100"}
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    printed = (result.stdout + result.stderr).removesuffix("; trl 1.16.0 (installed)\n").rstrip("\n")
    assert printed == shown.rstrip("\n").removesuffix("; trl 1.16.0 (installed)"), printed
