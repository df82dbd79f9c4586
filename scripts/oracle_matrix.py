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

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from trainwright_lint.rules import RULES

from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy
from trainwright.testing.oracle import ACROSS_RELEASES, Difference, Record, Spec, compare, run_specs
from trainwright.testing.releases import ensure

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ROOT / "tests" / "oracle" / "programs" / "plain.py"  # the stock Trainer: what a release changes
PINNED = "5.24.0"
RELEASES = ("4.45.2", "4.46.3", PINNED)  # oldest first; 4.45.2 is only a reference for originals
TASKS = ("causal-lm", "classification")


@dataclass
class Case:
    name: str
    original: Path
    fixed: Path
    unsafe: bool  # only ``--unsafe-fixes`` makes this fix
    target: str = DEFAULT_RANGE  # the range the fix was made for: it is judged on those releases only
    verdicts: dict[str, str] = field(default_factory=dict)  # release -> equal / different / not runnable
    differences: dict[str, list[Difference]] = field(default_factory=dict)


def _fix(name: str, source: Path, folder: Path, target: str) -> list[Case]:
    """The safe fix of ``source`` and, when it differs, the unsafe one: each a case."""
    out = []
    safe = fixed_copy(source, folder / "safe", target=target)
    if safe.changed:
        out.append(Case(name, source, safe.path, unsafe=False, target=target))
    every = fixed_copy(source, folder / "unsafe", target=target, unsafe=True)
    if every.changed and (not safe.changed or every.path.read_bytes() != safe.path.read_bytes()):
        out.append(Case(name + " (unsafe)", source, every.path, unsafe=True, target=target))
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
    """``(program path, release) -> Record``: every program (and the plain Trainer) on every release,
    one child per release."""
    programs = sorted({str(c.original) for c in cases} | {str(c.fixed) for c in cases} | {str(PLAIN)})
    return _run(programs, releases, task)


def across(reference: Record, ref_plain: Record, fixed: Record, plain: Record) -> list[Difference]:
    """``fixed`` (on a newer release) against the original ``reference`` (on the last release where it
    ran). Where the release itself changed the stock Trainer's losses (4.46 counts unshifted labels in
    ``num_items_in_batch``: a causal LM's loss times (T-1)/T), each program's loss and gradient norm
    are taken relative to the plain Trainer's on its own release, so only what the fix changed shows."""
    if not compare(ref_plain, plain, ignore=ACROSS_RELEASES):
        return compare(reference, fixed, ignore=ACROSS_RELEASES)
    found = compare(reference, fixed, ignore=(*ACROSS_RELEASES, "steps"))
    for a, pa, b, pb in zip(reference.phases, ref_plain.phases, fixed.phases, plain.phases):
        for i, (x, px, y, py) in enumerate(zip(a.steps, pa.steps, b.steps, pb.steps)):
            for name in ("loss", "grad_norm"):
                u, v = getattr(x, name) / getattr(px, name), getattr(y, name) / getattr(py, name)
                if abs(u - v) > 1e-4 * abs(u):
                    found.append(Difference(f"{a.name}.steps[{i}].{name} / plain Trainer's", u, v))
    return found


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
    for release in [r for r in releases if Version(r) in SpecifierSet(case.target)]:
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
            plain = (records[(str(PLAIN), before[-1])], records[(str(PLAIN), release)])
            found = across(reference, plain[0], fixed, plain[1])
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
        # Tried as a classifier only when the causal LM ran it nowhere in its range.
        pending = [c for c in pending if c.verdicts and set(c.verdicts.values()) == {"not runnable"}]


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
        for release in RELEASES:
            verdicts = [c.verdicts.get(release) for c in chosen]
            if not any(verdicts):
                continue
            lines.append(
                f"{kind} fixes on {release}: {len(verdicts) - verdicts.count(None)} in range, {verdicts.count('equal')} equal, "
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
