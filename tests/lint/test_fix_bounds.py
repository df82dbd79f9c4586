"""What bounds ``trainwright fix``: libcst sees only the statements an edit needs (holes), the
per-file time limit covers the fix as it covers the lint, and files named only to resolve bases keep
no tree. Times themselves are measured by ``benchmarks/lint_scaling.py``, not here."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from fix_fs_support import TARGET
from trainwright_lint.configuration import LintConfig
from trainwright_lint.driver import fix_within_limit
from trainwright_lint.fixes import segment
from trainwright_lint.runner import lint_files


def gated_method(n: int) -> str:
    blocks = "".join(
        f"        if self.state.global_step % 10 == {i % 10}:\n            print('step', {i})\n"
        for i in range(n)
    )
    return (
        "from transformers import Trainer\n\n\n"
        "class StepTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        # the gated blocks follow\n"
        f"{blocks}"
        "        loss = super().compute_loss(model, inputs, return_outputs)\n"
        f"{blocks}"
        "        return loss\n"
    )


def fix(path: Path, timeout: float, diff: bool = False) -> tuple[object, str]:
    lint_config = LintConfig(root=path.parent, transformers_version=TARGET, file_timeout=0)
    result = lint_files([str(path)], lint_config, jobs=1, keep_model=True)
    out = io.StringIO()
    config = lint_config.with_overrides(file_timeout=timeout)
    report = fix_within_limit(result.findings, config, result=result, diff=diff, out=out)
    return report, out.getvalue()


def test_holes_cover_the_untouched_runs_of_the_edited_scope() -> None:
    code = gated_method(30)
    tree = ast.parse(code)
    lines = segment._Lines(code)
    seg = segment.segment_for(tree, lines, 5)  # the `def compute_loss` line
    gaps = segment.holes(seg, segment._keep_ends(code)[seg.first - 1 : seg.last], [5])
    # The 30 blocks before the super() call, and the 30 after it with the return: only the call stays.
    assert gaps == [(7, 66), (68, 128)]


def test_a_fix_through_holes_changes_only_the_signature_and_the_call(tmp_path: Path) -> None:
    path = tmp_path / "steps.py"
    source = gated_method(300)
    path.write_text(source, encoding="utf-8")
    report, _ = fix(path, timeout=0)
    fixed = path.read_text(encoding="utf-8")
    assert report.applied == 1  # type: ignore[attr-defined]
    assert "return_outputs=False, num_items_in_batch=None):" in fixed
    assert "return_outputs, num_items_in_batch=num_items_in_batch)" in fixed
    restored = fixed.replace(", num_items_in_batch=None", "").replace(
        ", num_items_in_batch=num_items_in_batch", ""
    )
    assert restored == source  # the 1,200 lines in holes came back exactly


def test_the_file_timeout_covers_fix(tmp_path: Path) -> None:
    path = tmp_path / "steps.py"
    source = gated_method(50)
    path.write_text(source, encoding="utf-8")
    report, _ = fix(path, timeout=0.001)  # no fix reads, parses and re-lints a file in a millisecond
    assert path.read_text(encoding="utf-8") == source
    assert report.applied == 0  # type: ignore[attr-defined]
    assert report.errors == [f"{path}: skipped: took longer than 0.001s (file-timeout); not fixed"]  # type: ignore[attr-defined]
    assert sorted(f.code for f in report.remaining) == ["TW201", "TW301"]  # type: ignore[attr-defined]


def test_a_supervised_fix_writes_and_shows_its_diff_once(tmp_path: Path) -> None:
    path = tmp_path / "steps.py"
    path.write_text(gated_method(5), encoding="utf-8")
    report, shown = fix(path, timeout=60, diff=True)
    assert report.errors == [] and len(report.changed) == 1  # type: ignore[attr-defined]
    assert shown.count("+++ b/") == 1 and "num_items_in_batch=None" in shown


def test_named_files_read_for_bases_keep_no_tree(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n', encoding="utf-8")
    (tmp_path / "base.py").write_text(
        "from transformers import Trainer\n\n\nclass Base(Trainer):\n    pass\n", encoding="utf-8"
    )
    (tmp_path / "child.py").write_text(
        "from base import Base\n\n\nclass Child(Base):\n    def log(self, logs):\n        pass\n",
        encoding="utf-8",
    )
    (tmp_path / "model.py").write_text(
        "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n", encoding="utf-8"
    )
    named = [str(tmp_path / n) for n in ("child.py", "model.py")]
    config = LintConfig(root=tmp_path, transformers_version=TARGET, file_timeout=0)
    result = lint_files(named, config, jobs=1, explicit=named)
    assert [(Path(f.path).name, f.code) for f in result.findings] == [("child.py", "TW301")]
    assert result.workspace is not None
    assert str(tmp_path / "model.py") not in result.workspace.units  # summarised, then dropped
