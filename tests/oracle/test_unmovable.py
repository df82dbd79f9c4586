"""The moves blind labels ask for that do not train the same (``tests/oracle/unmovable/README.md``).

Each original runs, the linter writes no move for it, and the hand-written move the label describes is
reported different by the oracle in the field its docstring names: the evidence behind "no move, no
finding" on these kinds of code, and the reason they stay false negatives of TW2xx on the splits."""

from __future__ import annotations

from pathlib import Path

import pytest
from trainwright_lint.rules import moving

from trainwright.testing.compare import compare
from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy, judged_spec
from trainwright.testing.oracle import run_specs

HERE = Path(__file__).parent / "unmovable"
DIFFERS_IN = {  # the field each docstring names
    "log_line_before_epoch_in_log_copy": ".lines[",
    "metrics_printed_after_own_dispatch_and_log": ".lines[",
    "norm_added_before_log": ".log_history[",
    "tracker_file_before_dispatch_in_log_copy": "/tracker.jsonl",
}


@pytest.fixture(scope="module")
def records() -> dict[str, list[str]]:
    names = sorted(DIFFERS_IN)
    specs = [s for n in names for s in (judged_spec(HERE / f"{n}.py"), judged_spec(HERE / f"{n}_moved.py"))]
    runs = run_specs(specs)
    out = {}
    for k, name in enumerate(names):
        original, moved = runs[2 * k], runs[2 * k + 1]
        assert original.error is None and moved.error is None, (original.error, moved.error)
        out[name] = [d.where for d in compare(original, moved)]
    return out


def test_every_pair_is_listed() -> None:
    assert {p.stem.removesuffix("_moved") for p in HERE.glob("*.py")} == set(DIFFERS_IN)


@pytest.mark.parametrize("name", sorted(DIFFERS_IN))
def test_the_labelled_move_trains_differently(records: dict[str, list[str]], name: str) -> None:
    assert any(DIFFERS_IN[name] in where for where in records[name]), records[name]


@pytest.mark.parametrize("name", sorted(DIFFERS_IN))
def test_the_linter_writes_no_move(tmp_path: Path, name: str) -> None:
    fixed = fixed_copy(HERE / f"{name}.py", tmp_path, target=DEFAULT_RANGE, unsafe=True, select=moving())
    assert not fixed.changed, fixed.output
