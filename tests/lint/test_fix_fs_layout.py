"""Fixed bytes, exactly: CR-only line endings (the last one included) and one-parameter-per-line
signatures, through the real CLI on real files, compared byte for byte with committed fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fix_fs_support import FIX_FIXTURES, run_fix


@pytest.mark.parametrize("case", ["tw301_cr_only_endings", "tw301_multiline_signature"])
def test_fixed_bytes_match_the_committed_fixture(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "train.py"
    shutil.copyfile(FIX_FIXTURES / f"{case}.before.py", path)
    status, out, err = run_fix([str(path)], capsys)
    assert status == 0, (out, err)
    assert path.read_bytes() == (FIX_FIXTURES / f"{case}.after.py").read_bytes()
    status, out, err = run_fix([str(path)], capsys)  # idempotent
    assert "fixed 0 findings in 0 files" in err
    assert path.read_bytes() == (FIX_FIXTURES / f"{case}.after.py").read_bytes()


def test_cr_only_fixture_really_has_cr_only_endings() -> None:
    """Guards the fixture itself: an editor or a checkout converting it to LF would make the test
    above pass without testing anything."""
    for name in ("tw301_cr_only_endings.before.py", "tw301_cr_only_endings.after.py"):
        data = (FIX_FIXTURES / name).read_bytes()
        assert b"\n" not in data and data.count(b"\r") >= 6 and data.endswith(b")\r"), name


def test_multiline_fixture_has_no_trailing_whitespace_or_unused_parameter() -> None:
    after = (FIX_FIXTURES / "tw301_multiline_signature.after.py").read_text(encoding="utf-8")
    assert all(line == line.rstrip() for line in after.splitlines())
    code = [line for line in after.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if "model=None" in line or "*," in line]
