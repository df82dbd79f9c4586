#!/usr/bin/env python3
"""Judge every fix the linter offers, on the rule examples and the gallery, with the behaviour oracle.

For each program with a fix (an INVALID example of a fixable rule, TW301/302/303/304/401/402; a
gallery ``*_before.py``) the fixed copy is made by the CLI, as a user gets it (``trainwright fix``, and
``--unsafe-fixes`` for the unsafe ones), and both programs train under ``trainwright.testing.oracle`` on
transformers 4.46.3 (installed beside the pinned one under ``.oracle/``; 4.45.2 too, the last release
before ``num_items_in_batch``) and on the pinned 5.24.0. A fix is **equal** on a release when

* the original runs there and the records are oracle-equal field by field, or
* the original fails there (the reason for the fix) and the fixed program trains as the original did on
  the last release where it ran (``compare(..., ignore=ACROSS_RELEASES)``: failures, per-step loss and
  gradient norm, printed lines).

A program whose original runs on no release (it needs its own data, model or arguments) is **not
runnable** on the toy model and counted apart. Prints how many fixes, how many equal, and every
difference; ``docs/lint.md`` records the last run.

    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py            # installs 4.x if missing
    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py --gallery-only --releases 5.24.0
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trainwright_lint.rules import RULES

from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy
from trainwright.testing.oracle import ACROSS_RELEASES, Difference, Record, Spec, compare, run_specs
from trainwright.testing.releases import ensure

ROOT = Path(__file__).resolve().parent.parent
PINNED = "5.24.0"
RELEASES = ("4.45.2", "4.46.3", PINNED)  # oldest first; 4.45.2 is only a reference for originals
CHECKED = ("4.46.3", PINNED)
TASKS = ("causal-lm", "classification")


@dataclass
class Case:
    name: str
    original: Path
    fixed: Path
    unsafe: bool  # only ``--unsafe-fixes`` makes this fix
    verdicts: dict[str, str] = field(default_factory=dict)  # release -> equal / different / not runnable
    differences: dict[str, list[Difference]] = field(default_factory=dict)


def _fix(name: str, source: Path, folder: Path, target: str) -> list[Case]:
    """The safe fix of ``source`` and, when it differs, the unsafe one: each a case."""
    out = []
    safe = fixed_copy(source, folder / "safe", target=target)
    if safe.changed:
        out.append(Case(name, source, safe.path, unsafe=False))
    every = fixed_copy(source, folder / "unsafe", target=target, unsafe=True)
    if every.changed and (not safe.changed or every.path.read_bytes() != safe.path.read_bytes()):
        out.append(Case(name + " (unsafe)", source, every.path, unsafe=True))
    return out


def rule_example_cases(work: Path) -> list[Case]:
    cases = []
    for code, rule in sorted(RULES.items()):
        if rule.fix_module is None:
            continue
        for i, example in enumerate(rule.INVALID):
            folder = work / f"{code}-{i}"
            folder.mkdir(parents=True)
            source = folder / "example.py"
            source.write_text(textwrap.dedent(example.code).lstrip("\n"))
            cases += _fix(f"{code} example {i}", source, folder, f"=={example.version or PINNED}")
    return cases


def gallery_cases(work: Path) -> list[Case]:
    cases = []
    for source in sorted((ROOT / "examples" / "gallery").glob("*_before.py")):
        cases += _fix(f"gallery {source.stem}", source, work / source.stem, DEFAULT_RANGE)
    return cases


def _records(
    cases: Sequence[Case], releases: dict[str, Path | None], task: str
) -> dict[tuple[str, str], Record]:
    """``(program path, release) -> Record``, one child per release: every original and fixed program
    on the checked releases, then the originals that failed there on the older reference releases."""
    programs = sorted({str(c.original) for c in cases} | {str(c.fixed) for c in cases})
    checked = [r for r in releases if r in CHECKED]
    records = _run(programs, {r: releases[r] for r in checked}, task)
    failed = sorted(
        {str(c.original) for c in cases if any(records[(str(c.original), r)].failed for r in checked)}
    )
    older = {r: f for r, f in releases.items() if r not in CHECKED}
    if failed and older:
        records.update(_run(failed, older, task))
    return records


def _run(
    programs: Sequence[str], releases: dict[str, Path | None], task: str
) -> dict[tuple[str, str], Record]:
    specs = [
        Spec(Path(p), callbacks=("*",), task=task, release=f) for f in releases.values() for p in programs
    ]
    keys = [(p, r) for r in releases for p in programs]
    return dict(zip(keys, run_specs(specs)))


def judge(case: Case, records: dict[tuple[str, str], Record], releases: Sequence[str]) -> None:
    """Set ``case``'s verdict on each checked release (see the module docstring)."""
    runs = [
        r
        for r in releases
        if (str(case.original), r) in records and not records[(str(case.original), r)].failed
    ]
    for release in [r for r in releases if r in CHECKED]:
        original = records[(str(case.original), release)]
        fixed = records[(str(case.fixed), release)]
        if not original.failed:
            found = compare(original, fixed)
        else:
            before = [r for r in runs if releases.index(r) < releases.index(release)]
            if not before:
                case.verdicts[release] = "not runnable"
                continue
            reference = records[(str(case.original), before[-1])]
            found = compare(reference, fixed, ignore=ACROSS_RELEASES)
        case.verdicts[release] = "equal" if not found else "different"
        case.differences[release] = found


def run(cases: list[Case], releases: dict[str, Path | None]) -> None:
    """Judge on the causal LM; programs that run on no release there are tried as a classifier."""
    names = list(releases)
    pending = cases
    for task in TASKS:
        if not pending:
            return
        records = _records(pending, releases, task)
        for case in pending:
            case.verdicts.clear()
            case.differences.clear()
            judge(case, records, names)
        pending = [c for c in pending if "not runnable" in c.verdicts.values()]


def report(cases: Sequence[Case]) -> str:
    lines = []
    for case in cases:
        verdicts = ", ".join(f"{r}: {v}" for r, v in case.verdicts.items())
        lines.append(f"{case.name}: {verdicts}")
        for release, found in case.differences.items():
            lines += [f"    {release} {d}" for d in found]
    for kind, chosen in (
        ("safe", [c for c in cases if not c.unsafe]),
        ("unsafe", [c for c in cases if c.unsafe]),
    ):
        for release in CHECKED:
            verdicts = [c.verdicts.get(release) for c in chosen]
            lines.append(
                f"{kind} fixes on {release}: {len(chosen)} fixes, {verdicts.count('equal')} equal, "
                f"{verdicts.count('different')} different, {verdicts.count('not runnable')} not runnable on the toy model"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gallery-only", action="store_true")
    parser.add_argument("--examples-only", action="store_true")
    parser.add_argument("--releases", nargs="+", default=list(RELEASES))
    args = parser.parse_args(argv)
    releases = {r: (None if r == PINNED else ensure(r)) for r in args.releases}
    with tempfile.TemporaryDirectory(prefix="tw-oracle-matrix-") as tmp:
        work = Path(tmp)
        cases = [] if args.gallery_only else rule_example_cases(work / "rules")
        cases += [] if args.examples_only else gallery_cases(work / "gallery")
        run(cases, releases)
        print(report(cases))
    safe = [c for c in cases if not c.unsafe]
    return 0 if all(v != "different" for c in safe for v in c.verdicts.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
