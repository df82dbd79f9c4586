"""Issue 38 items 8 and 14: requirement sources that made the target resolution exponential.

Item 8: Poetry ``||`` constraints in many dependency groups were combined as strings, every branch
with every other: 16 groups took 54 s, 20 groups 7.7 GB. Item 14: ``-r`` includes forming a diamond
(each level includes the next twice) were read once per path: 16 levels 34 s, 26 levels over 120 s.
Each test builds the real project files, resolves the target as ``trainwright lint`` does, and checks
the answer against the catalogued releases computed independently, plus a structural bound (the number
of alternatives kept, the number of file reads), never a wall-clock time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from trainwright_lint.configuration.target import resolve_project_target
from trainwright_lint.requirements import find_declaration

from trainwright.catalog import load_catalog

VERSIONS = load_catalog("transformers").versions


def _poetry_project(root: Path, groups: list[str]) -> None:
    lines = ['[tool.poetry]\nname = "p"\n[tool.poetry.dependencies]\npython = "^3.10"\n']
    for i, constraint in enumerate(groups):
        lines.append(f'[tool.poetry.group.g{i}.dependencies]\ntransformers = "{constraint}"\n')
    (root / "pyproject.toml").write_text("".join(lines))


def _admitted(groups: list[str]) -> list[str]:
    """The catalogued releases every group admits, each ``||`` branch read by hand (``^4.44`` is
    ``>=4.44,<5``)."""

    def branch(text: str) -> SpecifierSet:
        text = text.strip()
        if text.startswith("^"):
            major = int(text[1:].split(".")[0])
            return SpecifierSet(f">={text[1:]},<{major + 1}")
        return SpecifierSet(text)

    return [
        v
        for v in VERSIONS
        if all(any(Version(v) in branch(b) for b in group.split("||")) for group in groups)
    ]


CASES = {
    "20 groups, the same two branches": ["^4.44 || ^5.0"] * 20,
    "20 groups, shifting lower bounds": [f">={4 + (i % 2)}.{40 + i} || ^5.{i}" for i in range(20)],
    "24 groups, three branches each": [">=4.40,<4.50 || >=4.50,<4.60 || ^5.0"] * 24,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_poetry_or_constraints_across_groups_combine_without_blow_up(tmp_path: Path, name: str) -> None:
    groups = CASES[name]
    _poetry_project(tmp_path, groups)
    problems: list[str] = []
    declaration = find_declaration(tmp_path, "transformers", problems)
    assert declaration is not None, problems
    assert len(declaration.alternatives) <= 64, len(declaration.alternatives)  # was 2**20
    target = resolve_project_target("transformers", tmp_path)
    expected = _admitted(groups)
    assert expected, "the case must admit some release, or it checks nothing"
    assert list(target.releases) == expected


def test_contradictory_groups_are_reported_as_written(tmp_path: Path) -> None:
    """Dropping empty combinations must not drop the message: the contradiction is kept as written."""
    _poetry_project(tmp_path, [">=5.0", "<4.40"])
    target = resolve_project_target("transformers", tmp_path)
    assert target.specifier == ">=5.0,<4.40"
    assert any(">=5.0,<4.40 (pyproject.toml) contains no catalogued release" in w for w in target.warnings)


def _diamond(root: Path, levels: int) -> None:
    """``requirements.txt`` -> level 0; level k includes level k+1 twice (through two names, as two
    teams' files would) and states one line that does not parse, so every read leaves a problem."""
    (root / "requirements.txt").write_text("-r level0.txt\n")
    for k in range(levels):
        nxt = f"level{k + 1}.txt"
        (root / f"level{k}.txt").write_text(
            f"-r {nxt}\n-r ./{nxt}\ntransformers (>=4.40 # an unclosed parenthesis\n"
        )
    (root / f"level{levels}.txt").write_text("transformers>=4.44,<4.48\n")


def test_include_diamond_reads_each_file_once(tmp_path: Path) -> None:
    _diamond(tmp_path, 12)
    problems: list[str] = []
    declaration = find_declaration(tmp_path, "transformers", problems)
    assert declaration is not None and declaration.alternatives == (">=4.44,<4.48",)
    assert len(problems) == 12, len(problems)  # one per file; 4,095 when read once per include path


def test_include_diamond_26_levels_resolves(tmp_path: Path) -> None:
    _diamond(tmp_path, 26)
    target = resolve_project_target("transformers", tmp_path)
    assert list(target.releases) == [v for v in VERSIONS if Version(v) in SpecifierSet(">=4.44,<4.48")]
