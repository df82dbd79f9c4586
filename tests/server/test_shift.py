"""``server.shift``: a finding moved by a line delta, every position it holds, and a refusal (the
class is linted again) when a position lies outside the classes that moved."""

from __future__ import annotations

from trainwright_lint.finding import Finding
from trainwright_lint.rules.tw303_removed_api import RenameSelfAttribute
from trainwright_lint.server.shift import shifted


def finding(message: str, line: int = 12, fix: object = None) -> Finding:
    return Finding(
        code="TW201",
        name="n",
        message=message,
        path="m.py",
        line=line,
        column=9,
        end_line=line + 1,
        end_column=20,
        noqa_lines=(line, line + 1),
        moved=((line, line + 1),),
        fix=fix,
    )


def test_every_position_moves() -> None:
    fix = RenameSelfAttribute(line=12, old="tokenizer", new="processing_class")
    f = finding("`m` prints (lines 12–13, 15); called at pkg/m.py:14 and at m.py:14", fix=fix)
    moved = shifted(f, 3, [(10, 20)], "m.py")
    assert moved is not None
    assert (moved.line, moved.end_line, moved.noqa_lines, moved.moved) == (15, 16, (15, 16), ((15, 16),))
    assert moved.fix == RenameSelfAttribute(line=15, old="tokenizer", new="processing_class")
    assert (
        moved.message == "`m` prints (lines 15–16, 18); called at pkg/m.py:14 and at m.py:17"
    )  # another file's stays


def test_a_place_outside_the_moved_classes_refuses() -> None:
    assert shifted(finding("called at m.py:3"), 2, [(10, 20)], "m.py") is None  # module code, not moved
    assert shifted(finding("(line 30)"), 2, [(10, 20)], "m.py") is None
    assert shifted(finding("ok", line=25), 2, [(10, 20)], "m.py") is None
    assert shifted(finding("ok", fix=object()), 2, [(10, 20)], "m.py") is None  # a fix without a line
    kept = shifted(finding("passes 3 positional arguments in 4.46.0 (line 12)"), 2, [(10, 20)], "m.py")
    assert kept is not None and kept.message == "passes 3 positional arguments in 4.46.0 (line 14)"
