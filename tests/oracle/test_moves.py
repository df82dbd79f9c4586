"""Every TW2xx move in ``tests/oracle/moves/`` (one per gallery pattern that carries a fix, and the
first round's three) is oracle-equal to its original: ``scripts/move_oracle.py`` applies
``trainwright fix --unsafe-fixes`` and trains both at GA 1 and 2 with checkpoints and a resume."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]
MOVES = sorted((Path(__file__).parent / "moves").glob("*.py"))
sys.path.insert(0, str(ROOT / "scripts"))

import move_oracle


@pytest.mark.slow
def test_every_move_is_oracle_equal(capsys: pytest.CaptureFixture[str]) -> None:
    rc = move_oracle.main([str(p) for p in MOVES])
    out = capsys.readouterr().out
    assert f"{len(MOVES)} of {len(MOVES)} moves oracle-equal" in out, out
    assert "no move" not in out, out
    assert rc == 0
