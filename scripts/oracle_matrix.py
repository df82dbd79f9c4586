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
  gradient norm, printed lines). Where it ran on none of the asked releases, an older one installed
  beside (4.45.2 with TRL 0.11.4) is run as that reference, and the case's line says so. Where it ran
  on none before the release (a signature written for newer releases), the first release after it where
  it ran is the reference. Where it runs on no release at all because an event method takes no
  ``**kwargs`` (TW402's reason), the reference is the original with each event method handed only the
  arguments it declares, on the same release (``trainwright.testing.declared``).

A rule example that is a script (TW304's ``TrainingArguments(...)`` calls: it builds no model) is judged
as the dev split's call sites are, on stand-ins of each rename (``trainwright.testing.renames``).

A program whose original runs on no release (it needs its own data, model or arguments), or whose
original and fixed copies fail alike on a release, is **not runnable** there on the toy model and
counted apart, with the reason (the original's error). Prints how many fixes, how many equal, and every
difference; ``docs/lint.md`` records the last run.

``--dev-split`` judges instead every ``[*]`` safe fix on the dev split's repositories
(``benchmarks/ecosystem/repos.toml``, exported from their snapshots as ``scripts/ecosystem_check.py``
does): the repository is fixed by ``trainwright fix`` for ``>=4.44,<6`` (TRL's own
code for the range TRL 1.16 declares, ``>=4.56.2``, and judged on 4.56.2, its floor, in place of an asked
release below it: ``in_ranges``), and each
(file, class) holding a safe fix is one case, its class trained as the Trainer. A TW304 fix at a call
site (the repository's own script builds the Trainer) cannot run on the toy model and is counted so.
With ``--moves`` the cases are the TW201/TW202 moves instead (``fix --unsafe-fixes --select TW201,TW202``),
judged the same way (issue 33). ``--test-split`` does the same on the blind test split
(``benchmarks/ecosystem/test/repos.toml``): a measure of the fixes on code nobody here tuned on, run
and never read. The packages the projects import that the venv lacks (wandb, nltk,
librosa, ...) are installed beside it and put last on the child's path (``trainwright.testing.companions``;
``--no-companions`` runs without them). TRL's trainers train on their own data (``trainwright.testing.families``).

The gallery run also applies every ``fix --suggest`` preview (``trainwright.testing.suggested``: the
printed diff of the one move applied to the file) and trains it against the original on the pinned
release; every printed preview must be oracle-equal, and findings with no mechanical move are counted
as withheld.

    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py            # installs 4.x if missing
    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py --gallery-only --releases 5.24.0
    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py --dev-split       # the dev split
    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py --dev-split --moves  # its TW201/TW202 moves
    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py --test-split      # the blind split, measured
    PYTHONPATH=src:plugin .venv/bin/python scripts/oracle_matrix.py --suggestions-only
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from trainwright_lint.rules import RULES, moving
from trainwright_lint.rules.tw304_removed_argument import RemovedArgument

from trainwright.testing import companions, reasons
from trainwright.testing.compare import named_differences
from trainwright.testing.declared import needs_reference, write_reference
from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy, judged_spec
from trainwright.testing.oracle import ACROSS_RELEASES, Difference, Record, compare, run_specs
from trainwright.testing.releases import (
    ReleaseUnavailable,
    declared_range,
    ensure,
    range_floor,
    release_dir,
)
from trainwright.testing.renames import NoStandIn, Rename, renames_in, stand_in_values, write_stand_ins
from trainwright.testing.suggested import Suggested, applied

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its neighbour, run as a script or imported
import ecosystem_check  # the dev split's corpus and how its snapshots are exported

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ROOT / "tests" / "oracle" / "programs" / "plain.py"  # the stock Trainer: what a release changes
PLAIN_KEY = (str(PLAIN), None, None)
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
    trainer: str | None = None  # the fixed Trainer class (default: the one the module defines)
    fixes: int = 1  # how many fixes of the linter's this case judges
    reason: str = ""  # why it cannot run on any release (set before the run: a call-site fix)
    reasons: dict[str, str] = field(default_factory=dict)  # release -> why it is not runnable there
    roots: tuple[Path, Path] | None = None  # the original's and the fixed copy's project roots (dev split)
    verdicts: dict[str, str] = field(default_factory=dict)  # release -> equal / different / not runnable
    differences: dict[str, list[Difference]] = field(default_factory=dict)
    # release -> the release whose original run it was judged against (the original fails there)
    references: dict[str, str] = field(default_factory=dict)
    plain: Path | None = None  # its plain twin across releases (``plain_program``); None: the stock Trainer
    # release -> the names that release lacks, stood in for on both sides (``trainwright.testing.standins``)
    stand_ins: dict[str, tuple[str, ...]] = field(default_factory=dict)
    arguments: dict[str, str] = field(default_factory=dict)  # release -> the project's own arguments class
    # the original with each event handler given only what it declares (``trainwright.testing.declared``):
    # the reference where the original runs on no release because a handler lacks ``**kwargs``
    declared: Path | None = None
    # fields (``ga1/train.lines``) in which the original differs from a second run of itself (a printed
    # CPU load): not compared (``unstable_fields``)
    unstable: tuple[str, ...] = ()
    # library code the original rebinds when imported, put back after each program (``_library_guard``)
    patched: tuple[str, ...] = ()


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


def _script_cases(name: str, source: Path, folder: Path, target: str) -> list[Case] | None:
    """A rule example that is a script (it defines no class: TW304's ``TrainingArguments(...)`` and
    ``Trainer(...)`` calls), judged as the dev split's call sites are: each safe rename on its
    stand-ins (``stand_in_cases``), since the script itself builds no model to train. ``None`` for an
    example that defines a class (its program is trained as it is)."""
    text = source.read_text(encoding="utf-8")
    if any(isinstance(node, ast.ClassDef) for node in ast.walk(ast.parse(text))):
        return None
    folder.mkdir(parents=True, exist_ok=True)
    findings = json.loads(_linter("lint", folder, [str(source)], target, "--format", "json", "--exit-zero"))
    return call_site_cases(name, findings, text, folder, target)


def call_site_cases(label: str, findings: Sequence[dict], source: str, work: Path, target: str) -> list[Case]:
    """The TW304 renames among ``findings`` (the linter's JSON records of the file whose text is
    ``source``), each judged on its stand-ins: a rename of TRL's API on the TRL target's range
    (``trl_api_range``), any other on ``target``."""
    cases = []
    for rename in renames_in(findings, source):
        api = trl_api_range(target) if rename.callee.startswith("trl.") else target
        cases += stand_in_cases(label, [rename], work, api)
    return cases


def rule_example_cases(work: Path) -> list[Case]:
    """Each fixable rule's INVALID examples, fixed for the release it names. An example that names none
    (written for the newest) is fixed twice: for the pinned release alone, and for the gallery's range
    ``>=4.44,<6`` (judged on 4.46.3 too). Why: fixed only for ``==5.24.0`` no example was in range on
    4.46.3, and ``--examples-only --releases 4.46.3 5.24.0`` printed no 4.46.3 line at all."""
    cases = []
    for code, rule in sorted(RULES.items()):
        if rule.fix_module is None:
            continue
        for i, example in enumerate(rule.INVALID):
            folder = work / f"{code}-{i}"
            folder.mkdir(parents=True)
            source = folder / "example.py"
            source.write_text(textwrap.dedent(example.code).lstrip("\n"))
            targets = [(f"{code} example {i}", f"=={example.version or PINNED}")]
            if example.version is None:
                targets.append((f"{code} example {i} for {DEFAULT_RANGE}", DEFAULT_RANGE))
            for name, target in targets:
                where = folder / ("range" if target == DEFAULT_RANGE else "pinned")
                script = _script_cases(name, source, where, target)
                cases += _fix(name, source, where, target) if script is None else script
    return cases


def gallery_cases(work: Path) -> list[Case]:
    cases = []
    for source in sorted((ROOT / "examples" / "gallery").glob("*_before.py")):
        cases += _fix(f"gallery {source.stem}", source, work / source.stem, DEFAULT_RANGE)
    return cases


def _export(repo: dict, dest: Path) -> str:
    """The dev-split repository ``repo`` exported into ``dest`` as ``ecosystem_check`` does; returns why
    it could not be (empty when it was)."""
    name = repo["name"]
    if repo.get("source") == "installed:trl":
        trl_dir, _ = ecosystem_check.installed_trl(None)
        if trl_dir is None:
            return "TRL is not importable here"
        shutil.copytree(trl_dir, dest / "trl", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        return ""
    git_dir = ecosystem_check.mirror_dir(name, ecosystem_check.MIRROR_ROOT)
    if not git_dir.is_dir() or not ecosystem_check.has_commit(git_dir, repo["commit"]):
        return f"no snapshot of commit {repo['commit'][:12]} under {git_dir} (fetch github:{name})"
    ecosystem_check.export_git(git_dir, repo["commit"], dest)
    return ""


def _linter(command: str, tree: Path, paths: Sequence[str], target: str, *extra: str) -> str:
    """``trainwright <command>`` run in ``tree`` on ``paths`` for ``target`` (TRL at the labels' release)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainwright_lint",
            command,
            *extra,
            "--transformers-version",
            target,
            "--trl-version",
            ecosystem_check.TRL_TARGET,
            *paths,
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    return done.stdout


# the rules whose unsafe fix moves code into a callback (issue 33), from the registry
MOVES = moving()


def repo_cases(repo: dict, work: Path, target: str, moves: bool = False) -> tuple[list[Case], list[str]]:
    """One case per (file, class) with a safe fix in the dev-split repository ``repo``: the original
    export against a copy fixed by ``trainwright fix`` (safe fixes only), as the user runs it on the
    repository. With ``moves``, the TW201/TW202 moves instead (``fix --unsafe-fixes --select
    TW201,TW202``). Also the notes: why the repository or a fix was left out."""
    tree, fixed = work / "original", work / "fixed"
    tree.mkdir(parents=True)
    missing = _export(repo, tree)
    if missing:
        return [], [f"{repo['name']}: {missing}"]
    paths = list(repo.get("paths") or ["."])
    # every move the linter can write, its preview variants' too (``Rule.preview_variants``): each is judged
    select = ("--select", MOVES, "--preview") if moves else ()
    findings = json.loads(
        _linter("lint", tree, paths, target, "--format", "json", "--exit-zero", *select) or "[]"
    )
    resolve = ecosystem_check.PathResolver(tree, paths)  # reported names are relative to a project root
    groups: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    on_trl: dict[tuple[str, str | None], bool] = defaultdict(lambda: True)  # every fix about TRL's API
    for f in findings:
        if (f.get("fix") or {}).get("applicability") == ("unsafe" if moves else "safe"):
            key = (resolve(f["filename"]), f.get("class"))
            groups[key].append(f["code"])
            on_trl[key] &= f["code"] == RemovedArgument.code and TRL_API in f["message"]
    if not groups:
        return [], []
    shutil.copytree(tree, fixed, symlinks=True)  # a snapshot may hold links to folders it lacks
    _linter("fix", fixed, paths, target, *(("--unsafe-fixes", *select) if moves else ()))
    cases, notes = [], []
    for (filename, cls), codes in sorted(groups.items(), key=str):
        original, after = tree / filename, fixed / filename
        label = f"{repo['name']}:{filename} {cls} ({', '.join(codes)})"
        if original.read_bytes() == after.read_bytes():
            notes.append(f"{label}: `fix` left the file unchanged")
            continue
        if cls is None and not moves:  # TW304 at a call site: judged on stand-ins of each rename
            mine = [f for f in findings if resolve(f["filename"]) == filename and f.get("class") is None]
            cases += call_site_cases(label, mine, original.read_text(encoding="utf-8"), work, target)
            continue
        callback = all(code.startswith("TW4") for code in codes)
        judged_on = trl_api_range(target) if on_trl[(filename, cls)] else target
        case = Case(label, original, after, moves, judged_on, None if callback else cls, len(codes))
        case.roots = (tree, fixed)
        if cls is None:
            case.reason = reasons.CALL_SITE
        cases.append(case)
    return cases, notes


def stand_in_cases(label: str, found: Sequence[Rename], work: Path, target: str) -> list[Case]:
    """A call-site fix's renames, each judged on its stand-ins (``trainwright.testing.renames``): the
    oracle's own training passing the call's keyword and value, before and after the rename. A value
    that is not a literal is stood in for by each literal it can take, else by the new keyword's
    catalogue default (``stand_in_values``), and the case's name says which. The same rename with the
    same value is one pair of programs however many call sites make it."""
    cases = []
    for rename in found:
        try:
            values = stand_in_values(rename)
        except NoStandIn as why:
            cases.append(_set_aside(_stand_in_name(label, rename), work / "none.py", target, why))
            continue
        cases += [_stand_in_case(label, rename, value, stands, work, target) for value, stands in values]
    return cases


def _stand_in_name(label: str, rename: Rename, stands: str = "") -> str:
    name = f"{label} stand-in `{rename.callee}({rename.old}={rename.value})` -> `{rename.new}=`"
    return name + (f" (value {rename.value}: {stands})" if stands else "")


def _set_aside(name: str, where: Path, target: str, why: NoStandIn) -> Case:
    """A stand-in case that cannot run anywhere: no stand-in can be written (``why``)."""
    case = Case(name, where, where, False, target, "StandInTrainer")
    case.reason = f"{reasons.STAND_IN}: {why}"
    return case


def _stand_in_case(label: str, rename: Rename, value: str, stands: str, work: Path, target: str) -> Case:
    """The case of ``rename`` judged with ``value`` (standing for ``stands``, the call's non-literal
    value; empty: the call's own); set aside with its reason when no stand-in can be written."""
    judged = replace(rename, value=value) if stands else rename
    name = _stand_in_name(label, judged, stands)
    folder = work.parent / "stand-ins" / f"{abs(hash(judged)):x}"
    try:
        original, fixed = write_stand_ins(judged, folder)
    except NoStandIn as why:
        return _set_aside(name, folder / "none.py", target, why)
    case = Case(name, original, fixed, False, target, "StandInTrainer")
    case.plain = original.with_name(f"plain_{rename.old}.py")
    return case


# TW304's words for a keyword TRL's API no longer takes: "... is not accepted by `trl.DPOTrainer` in trl 1.16.0"
TRL_API = "` in trl "


def trl_api_range(target: str) -> str:
    """The releases a fix about TRL's API is judged on: ``target`` within those the installed TRL (the
    linter's TRL target) declares, as for TRL's own code (``in_ranges`` judges it on that range's floor
    where an older release is asked). Below it the oracle's folders hold an older TRL (0.11.4 on
    4.44-4.45), which the fix was not made for: `processing_class=` and `SFTConfig(max_length=)` fail
    there (11 dev fixes, 2026-12-07), and no transformers release the TRL target admits pairs with it."""
    return declared_range("trl", target)


def split_cases(
    work: Path,
    split: str = "dev",
    target: str = DEFAULT_RANGE,
    only: Sequence[str] = (),
    moves: bool = False,
) -> tuple[list[Case], list[str]]:
    """Every safe fix (or with ``moves``, every TW201/TW202 move) of every repository of ``split``
    (``benchmarks/ecosystem/repos.toml``, or ``test/repos.toml``), or of those whose name contains one
    of ``only``. The test split is run, never read: only the linter and the oracle see its code, and
    nothing is tuned on what they report (docs/lint-accuracy.md's rule for the test split)."""
    repos, _, _ = ecosystem_check.load_corpus(ecosystem_check.SPLITS[split])
    repos = [r for r in repos if not only or any(o in r["name"] for o in only)]
    cases, notes = [], []
    for i, repo in enumerate(repos):
        mine = trl_api_range(target) if repo.get("source") == "installed:trl" else target
        found, said = repo_cases(repo, work / f"{i:02d}", mine, moves)
        cases += found
        notes += said
    return cases, notes


# (module path, Trainer class name or None for the module's own, project root or None: alone)
Program = tuple[str, str | None, str | None]


def programs(case: Case) -> tuple[Program, Program]:
    """The original's and the fixed copy's program keys."""
    roots = case.roots or (None, None)
    return (
        (str(case.original), case.trainer, str(roots[0]) if roots[0] else None),
        (str(case.fixed), case.trainer, str(roots[1]) if roots[1] else None),
    )


def _records(
    cases: Sequence[Case], releases: dict[str, Path | None], task: str
) -> dict[tuple[Program, str], Record]:
    """``((program, trainer), release) -> Record``: every program (and the plain Trainer) on every
    release, one child per release."""
    keys = {k for c in cases for k in programs(c)} | {plain_program(c) for c in cases}
    return _run(sorted(keys | {PLAIN_KEY}, key=str), releases, task)


def plain_program(case: Case) -> Program:
    """The program that anchors ``case`` across releases: its own plain twin (a stand-in without the
    keyword, the same TRL class) when it has one, else the stock Trainer."""
    return (str(case.plain), case.trainer, None) if case.plain is not None else PLAIN_KEY


def across(
    reference: Record, ref_plain: Record, fixed: Record, plain: Record, own_lines: bool = True
) -> list[Difference]:
    """``fixed`` (on a newer release) against the original ``reference`` (on the last release where it
    ran). Where the release itself changed the stock Trainer's losses (4.46 counts unshifted labels in
    ``num_items_in_batch``: a causal LM's loss times (T-1)/T), each program's loss and gradient norm
    are taken relative to the plain Trainer's on its own release, so only what the fix changed shows.

    ``own_lines`` false: the programs print nothing of their own (a rename's stand-ins), so every line
    is the library's, and what one library release prints and another does not (TRL 0.17's table of
    completions at each evaluation, which TRL 1.16 no longer prints) is not compared."""
    if not compare(ref_plain, plain, ignore=ACROSS_RELEASES):
        return compare(reference, fixed, ignore=ACROSS_RELEASES)
    found = compare(reference, fixed, ignore=(*ACROSS_RELEASES, "steps", "lines"))
    for a, pa, b, pb in zip(reference.phases, ref_plain.phases, fixed.phases, plain.phases):
        if not own_lines:
            break
        # what the program prints beyond what its plain twin prints there (TRL 0.17 prints its own tables)
        mine, theirs = _beyond(a.lines, pa.lines), _beyond(b.lines, pb.lines)
        if mine != theirs:
            found.append(Difference(f"{a.name}.lines beyond the plain program's", mine, theirs))
    for a, pa, b, pb in zip(reference.phases, ref_plain.phases, fixed.phases, plain.phases):
        for i, (x, px, y, py) in enumerate(zip(a.steps, pa.steps, b.steps, pb.steps)):
            for name in ("loss", "grad_norm"):
                u, v = (
                    _relative(getattr(x, name), getattr(px, name)),
                    _relative(getattr(y, name), getattr(py, name)),
                )
                if not abs(u - v) <= 1e-4 * abs(u):  # an infinite ratio is never equal
                    found.append(Difference(f"{a.name}.steps[{i}].{name} / plain program's", u, v))
    return found


def _relative(value: float, plain: float) -> float:
    """``value`` relative to its plain twin's; a twin that does not move (TRL 0.11's DPO with no
    completion token left: gradient norm 0) gives 1 when the program does not move either, else inf."""
    if plain:
        return value / plain
    return 1.0 if not value else float("inf")


def _beyond(lines: Sequence[str], plain: Sequence[str]) -> list[str]:
    """``lines`` less one copy of each of ``plain``'s."""
    left = list(plain)
    out = []
    for line in lines:
        if line in left:
            left.remove(line)
        else:
            out.append(line)
    return out


def _run(
    keys: Sequence[Program], releases: dict[str, Path | None], task: str
) -> dict[tuple[Program, str], Record]:
    specs = [
        judged_spec(Path(p), trainer=t, task=task, release=f, root=Path(r) if r else None)
        for f in releases.values()
        for p, t, r in keys
    ]
    return dict(zip([(k, r) for r in releases for k in keys], run_specs(specs)))


def _head(error: str | None) -> str:
    """An error's first line (``""`` for none)."""
    return error.strip().splitlines()[0] if error and error.strip() else ""


def _first_line(record: Record) -> str:
    errors = [record.error] + [p.error for p in record.phases]
    return next((_head(e)[:160] for e in errors if _head(e)), "")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def judge(
    case: Case,
    records: dict[tuple[Program, str], Record],
    releases: Sequence[str],
    references: Sequence[str] = (),
) -> None:
    """Set ``case``'s verdict on each checked release (see the module docstring). ``references``:
    older releases (oldest first), not judged, where the original may have last run."""
    original_key, fixed_key = programs(case)
    order = [*references, *releases]
    runs = [r for r in order if (original_key, r) in records and not records[(original_key, r)].failed]
    for release in [r for r in releases if Version(r) in SpecifierSet(case.target)]:
        original = records[(original_key, release)]
        fixed = records[(fixed_key, release)]
        if _untrainable(case):  # it does not train the same twice: nothing to judge a fix by
            case.verdicts[release] = "not runnable"
            case.reasons[release] = (
                f"the original differs from a second run of itself: {', '.join(case.unstable)}"
            )
            continue
        found = _stable(compare(original, fixed, named=named_differences(_text(case.fixed))), case)
        unlike = _unlike_stand_ins(original, fixed, release)
        if unlike == BREAKS:  # ``found`` names the stand-ins (``setup.stand_ins``)
            case.verdicts[release], case.differences[release] = "different", found
            continue
        if unlike:
            case.verdicts[release], case.reasons[release] = "not runnable", unlike
            continue
        case.patched = case.patched or original.patched
        if original.stand_ins:
            case.stand_ins[release] = original.stand_ins
        if original.arguments:
            case.arguments[release] = original.arguments
        if original.failed and _fail_alike(original, fixed, found):  # the fix neither caused nor mended it
            case.verdicts[release] = "not runnable"
            case.reasons[release] = f"original and fixed fail alike: {_first_line(original)}"
            continue
        if original.failed:
            judged = _against_reference(case, records, release, runs, order)
            if isinstance(judged, str):
                case.verdicts[release], case.reasons[release] = "not runnable", judged
                continue
            case.references[release], found = judged[0], _stable(judged[1], case)
        case.verdicts[release] = "equal" if not found else "different"
        case.differences[release] = found


def _errors(record: Record) -> tuple[tuple[str, str], ...]:
    """Where ``record`` stopped and with what, each error's first line: ``(("setup", ""), ("ga1/train",
    "TypeError: ..."), ...)``."""
    return (("setup", _head(record.error)), *((p.name, _head(p.error)) for p in record.phases))


def _fail_alike(original: Record, fixed: Record, found: Sequence[Difference]) -> bool:
    """Whether both programs stop with the same errors in the same phases and differ only inside the
    phases that stopped (lines printed before the error, steps cut short): the fix neither caused nor
    mended the failure, so there is nothing to judge on this release.

    Why not "no difference at all": a move's callback may print before the override's own failure stops
    the phase (a moves-only run leaves the signature TW301 fixes as it was). Such a fixed program was
    then judged against the original on an older release, a crash against a training run, and called
    different (energy-efficient-llm's move on 5.24.0, 2026-12-07). A phase that ran to its end in both,
    the files and the set-up are still compared: a difference there is the fix's."""
    if not found:
        return True
    if _errors(original) != _errors(fixed):
        return False
    stopped = {name for name, error in _errors(original) if error}
    return all(d.where.split(".")[0] in stopped for d in found)


def _against_reference(
    case: Case,
    records: dict[tuple[Program, str], Record],
    release: str,
    runs: Sequence[str],
    order: Sequence[str],
) -> tuple[str, list[Difference]] | str:
    """Where ``case``'s original fails on ``release`` (the reason for the fix): the reference it is
    judged against, and the differences. The original on the last release before ``release`` where it
    ran; where it ran on none before (a signature written for newer releases, which older ones call
    differently: ``_save_checkpoint(self, model, trial)`` on 4.46, which passes ``metrics=``), on the
    first one after it; where it ran nowhere because an event method refuses a keyword (TW402's
    reason), its declared-arguments reference on ``release`` itself (``DECLARED``). A string: why
    there is nothing to judge it against (the original's error, or the reference's where the fixed
    program fails alike: another bug the fix does not touch)."""
    original_key, fixed_key = programs(case)
    fixed = records[(fixed_key, release)]
    at = order.index(release)
    before = [r for r in runs if order.index(r) < at]
    after = [r for r in runs if order.index(r) > at]
    if before or after:
        other = before[-1] if before else after[0]
        plain_key = plain_program(case)
        reference, ref_plain = records[(original_key, other)], records[(plain_key, other)]
        found = across(
            reference, ref_plain, fixed, records[(plain_key, release)], own_lines=case.plain is None
        )
        return other, found
    declared = records.get((declared_program(case), release)) if case.declared else None
    if declared is None:
        return _first_line(records[(original_key, release)])
    if needs_reference(_first_line(declared)):  # a handler the footer cannot reach (a class in a function)
        return f"{DECLARED}: a handler it cannot reach still refuses a keyword: {_first_line(declared)}"
    found = compare(declared, fixed, named=named_differences(_text(case.fixed)))
    if declared.failed and not found:
        return f"{DECLARED}, and fixed, fail alike: {_first_line(declared)}"
    return DECLARED, found


BREAKS = "the fixed program imports a name the release lacks, and the original none"
DECLARED = "the original with each event given only the arguments it declares"


def declared_program(case: Case) -> Program:
    """The program key of ``case``'s declared-arguments reference (``Case.declared``)."""
    roots = case.roots or (None, None)
    return (str(case.declared), case.trainer, str(roots[0]) if roots[0] else None)


def _declared_records(
    stranded: Sequence[Case],
    records: dict[tuple[Program, str], Record],
    releases: dict[str, Path | None],
    task: str,
) -> dict[tuple[Program, str], Record]:
    """The declared-arguments reference (``trainwright.testing.declared``) of each case of
    ``stranded`` whose original fails on every release tried because an event handler refuses a
    keyword (TW402's reason), run on ``releases``."""
    chosen = []
    for case in stranded:
        key = programs(case)[0]
        errors = [_first_line(record) for (program, _), record in records.items() if program == key]
        if errors and all(needs_reference(e) for e in errors):
            # beside the original in the exported project; a lone module's next to its fixed copy
            folder = case.original.parent if case.roots else case.fixed.parent / "declared"
            case.declared = case.declared or write_reference(case.original, folder)
            chosen.append(case)
    if not chosen:
        return {}
    return _run(sorted({declared_program(c) for c in chosen}, key=str), releases, task)


def _unlike_stand_ins(original: Record, fixed: Record, release: str) -> str:
    """Why the two programs cannot be judged on ``release`` when they needed different stand-ins, else
    empty. Where the original needed none, the fixed program's own new import of a name the release
    lacks is a difference (``BREAKS``: it fails to import there, whatever the original did). Where the
    original needed some, both fail to import on that release: a stand-in the fixed program alone
    needs would hide what the fix added, and one the original alone needs would judge the fixed
    program against a run no user has; neither is judged."""
    mine, theirs = set(original.stand_ins), set(fixed.stand_ins)
    if mine == theirs:
        return ""
    if not mine:
        return BREAKS
    if theirs - mine:
        names = ", ".join(f"`{n}`" for n in sorted(theirs - mine))
        return f"the fixed program also imports {names}, which {release} lacks (stand-ins on both sides)"
    names = ", ".join(f"`{n}`" for n in sorted(mine - theirs))
    return f"the fix drops the import of {names}, which {release} lacks: the original runs there only on stand-ins"


def _ran_nowhere(case: Case, records: dict[tuple[Program, str], Record], releases: Sequence[str]) -> bool:
    """Whether ``case``'s original failed on every release of ``releases`` in its range."""
    key = programs(case)[0]
    mine = [r for r in releases if Version(r) in SpecifierSet(case.target)]
    return bool(mine) and all(records[(key, r)].failed for r in mine)


def reference_releases(releases: dict[str, Path | None]) -> dict[str, Path]:
    """The releases of ``RELEASES`` older than every one asked and installed beside the venv, to stand
    as the last release where an original ran when it runs on none of those asked (a TRL trainer given
    ``tokenizer=``, which TRL 0.16 removed, runs on 4.45.2 with TRL 0.11.4). A folder is brought up to
    its requirements (``ensure``), never installed from nothing here; skipped, with a line on stderr,
    when that fails."""
    oldest = min(Version(r) for r in releases)
    out = {}
    older = [r for r in RELEASES if Version(r) < oldest]
    for release in [r for r in older if (release_dir(r) / "transformers" / "__init__.py").is_file()]:
        try:
            out[release] = ensure(release)
        except ReleaseUnavailable as why:
            print(f"no reference release {release}: {why}", file=sys.stderr)
    return out


def in_ranges(
    cases: Sequence[Case], releases: dict[str, Path | None]
) -> list[tuple[list[Case], dict[str, Path | None]]]:
    """``cases`` grouped by the releases each is judged on: those asked that its range holds, and where
    its range starts above an asked release, the range's floor in that release's place (TRL 1.16's own
    code is judged on 4.56.2, its floor, where 4.46.3 was asked: the oldest release it runs on)."""
    groups: dict[tuple[str, ...], list[Case]] = defaultdict(list)
    for case in cases:
        spec, floor = SpecifierSet(case.target), range_floor(case.target)
        mine = [r for r in releases if Version(r) in spec]
        if floor and floor not in mine and any(Version(r) < Version(floor) for r in releases):
            mine.insert(0, floor)
        groups[tuple(mine)].append(case)
    return [
        (group, {r: releases[r] if r in releases else ensure(r) for r in names})
        for names, group in groups.items()
    ]


def run(cases: list[Case], releases: dict[str, Path | None]) -> None:
    """Judge on the causal LM; programs that run on no release there are tried as a classifier. A case
    whose original runs on none of ``releases`` is judged against its run on an older installed release
    (``reference_releases``), as the last release where it ran; its line says so."""
    names = list(releases)
    older: dict[str, Path] | None = None
    pending = cases
    for task in TASKS:
        if not pending:
            return
        records = _records(pending, releases, task)
        stranded = [c for c in pending if _ran_nowhere(c, records, names)]
        if stranded and older is None:
            older = reference_releases(releases)
        if stranded and older:
            records.update(_records(stranded, older, task))
        records.update(_declared_records(stranded, records, releases, task))
        references = list(older or {})
        for case in pending:
            first = dict(case.reasons)
            _judge_afresh(case, records, names, references if case in stranded else ())
            if first and set(case.verdicts.values()) == {"not runnable"}:
                case.reasons = first  # runs as neither: the causal LM's reasons, the first tried
        shaky = [c for c in pending if "different" in c.verdicts.values() and not c.unstable]
        for case in unstable_fields(shaky, records, {**(older or {}), **releases}, task):
            _judge_afresh(case, records, names, references if case in stranded else ())
        # Tried as a classifier only when the causal LM ran it nowhere in its range.
        pending = [c for c in pending if c.verdicts and set(c.verdicts.values()) == {"not runnable"}]


def _judge_afresh(
    case: Case, records: dict[tuple[Program, str], Record], names: Sequence[str], older: Sequence[str]
) -> None:
    for known in (case.verdicts, case.differences, case.references, case.reasons):
        known.clear()
    case.stand_ins.clear()
    case.arguments.clear()
    judge(case, records, names, older)


def unstable_fields(
    cases: Sequence[Case],
    records: dict[tuple[Program, str], Record],
    releases: dict[str, Path | None],
    task: str,
) -> list[Case]:
    """Run the original of each of ``cases`` (judged different somewhere) once more on every release it
    ran on, and set ``Case.unstable`` to the fields in which the two runs differ; returns the cases
    with some. Why: a program that prints what it measures of the machine (``CPU: 52.6%``) differs from
    itself, and every fix of it looked different (the blind test split, 2026-12-07). Those fields say
    nothing about the fix; the others are still compared, and the case line names what was not."""
    keys = sorted({programs(c)[0] for c in cases}, key=str)
    ran = {r: f for r, f in releases.items() if any((k, r) in records for k in keys)}
    if not keys or not ran:
        return []
    again = _run(keys, ran, task)
    out = []
    for case in cases:
        key = programs(case)[0]
        found = [
            d
            for r in ran
            if (key, r) in records and (key, r) in again
            for d in compare(records[(key, r)], again[(key, r)])
        ]
        case.unstable = tuple(sorted({_field(d.where) for d in found}))
        out += [case] if case.unstable else []
    return out


def _field(where: str) -> str:
    """``ga1/train.lines[0]`` -> ``ga1/train.lines``: the phase's field a difference lies in."""
    found = re.match(r"[^.\[ ]+(?:\.[a-z_]+)?", where)
    return found.group(0) if found else where


def _untrainable(case: Case) -> bool:
    """Whether the original differs from itself beyond its printed lines (its losses, files, history):
    leaving those out would leave a verdict about nothing."""
    return any(not field.endswith(".lines") for field in case.unstable)


def _stable(found: list[Difference], case: Case) -> list[Difference]:
    """``found`` less the differences in a field where the original differs from itself (its printed
    lines only: ``_untrainable``)."""
    return [d for d in found if not d.where.startswith(case.unstable)] if case.unstable else found


def _grouped(by_release: dict[str, str]) -> dict[str, list[str]]:
    """``{reason: [releases]}``: a reason shared by several releases printed once."""
    out: dict[str, list[str]] = defaultdict(list)
    for release, why in by_release.items():
        out[why].append(release)
    return dict(out)


def why_not(case: Case, release: str) -> str:
    """The named kind of reason ``case`` cannot run on ``release`` (``trainwright.testing.reasons``)."""
    return reasons.kind(case.reasons.get(release) or case.reason, case.roots[0] if case.roots else None)


def _tally(kind: str, chosen: Sequence[Case], release: str) -> list[str]:
    """Summary lines: programs (and the fixes they hold) per verdict on ``release``, and the programs
    that cannot run there by kind of reason."""
    judged = [c for c in chosen if release in c.verdicts]
    if not judged:
        return []

    def count(some: Sequence[Case]) -> str:
        return f"{len(some)} ({sum(c.fixes for c in some)} fixes)"

    def having(verdict: str) -> list[Case]:
        return [c for c in judged if c.verdicts[release] == verdict]

    runnable = [c for c in judged if c.verdicts[release] != "not runnable"]
    lines = [
        f"{kind} fixes on {release}: {count(judged)} in range, {count(runnable)} runnable, "
        f"{count(having('equal'))} equal, {count(having('different'))} different"
        + "".join(f" ({c.name})" for c in having("different"))
        + f", {count(having('not runnable'))} not runnable on the toy model"
    ]
    for given, what in (
        (_stood_in, "with stand-ins for names it lacks"),
        (_own_args, "with the project's own arguments"),
    ):
        some = [c for c in judged if given(c, release)]
        if some:  # how many verdicts rest on them: a reader weighs those apart
            lines.append(
                f"    judged on {release} {what}: {count(some)}, "
                f"{count([c for c in some if c in runnable])} runnable, "
                f"{count([c for c in some if c.verdicts[release] == 'equal'])} equal"
            )
    kinds: dict[str, list[Case]] = defaultdict(list)
    for case in having("not runnable"):
        kinds[why_not(case, release)].append(case)
    for why, some in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"    not runnable on {release}: {count(some)} {why}")
    return lines


def _given(case: Case, release: str) -> str:
    """What the run of ``case`` on ``release`` was given beyond the toy run: stand-ins for the names
    the release lacks (every one named), and the project's own arguments class."""
    out = ""
    if case.stand_ins.get(release):
        out += " with stand-ins for " + ", ".join(f"`{n}`" for n in case.stand_ins[release])
    if case.arguments.get(release):
        out += f" with args as {case.arguments[release]}"
    return out


def _stood_in(case: Case, release: str) -> bool:
    return bool(case.stand_ins.get(release))


def _own_args(case: Case, release: str) -> bool:
    return bool(case.arguments.get(release))


def _against(case: Case, release: str) -> str:
    """What ``case`` was judged against on ``release`` when its original fails there, and what its
    run was given (``_given``)."""
    reference = case.references.get(release)
    if reference is None:
        return _given(case, release)
    if reference == DECLARED:
        return f" (against {DECLARED})" + _given(case, release)
    if reference in case.verdicts:
        return f" (against the original on {reference})" + _given(case, release)
    return (
        f" (against the original on {reference}, a reference release: it runs on none of this run's)"
        + _given(case, release)
    )


def report(cases: Sequence[Case], notes: Sequence[str] = (), unsafe: str = "unsafe") -> str:
    """Every case's verdicts and differences, then the tallies (``unsafe``: what the unsafe fixes are
    called, e.g. the TW201/TW202 moves)."""
    lines = []
    for case in [c for c in cases if c.verdicts]:  # the others are listed as not judged below
        verdicts = ", ".join(f"{r}: {v}{_against(case, r)}" for r, v in case.verdicts.items())
        lines.append(f"{case.name}: {verdicts}")
        if case.reason:
            lines.append(f"    cannot run here: {case.reason}")
        for why, where in _grouped(case.reasons).items():
            lines.append(f"    cannot run on {', '.join(where)}: {why}")
        if case.patched:
            lines.append(f"    patches the library, put back after each program: {', '.join(case.patched)}")
        if case.unstable:
            lines.append(
                f"    not compared, the original differs from itself there: {', '.join(case.unstable)}"
            )
        for release, found in case.differences.items():
            lines += [f"    {release} {d}" for d in found]
    lines += [f"not judged: {note}" for note in notes]
    lines += [
        f"not judged: {c.name}: no release of this run is in its range ({c.target})"
        for c in cases
        if not c.verdicts
    ]
    for kind, chosen in (
        ("safe", [c for c in cases if not c.unsafe]),
        (unsafe, [c for c in cases if c.unsafe]),
    ):
        judged = sorted({r for c in chosen for r in c.verdicts}, key=Version)
        lines += [t for r in judged for t in _tally(kind, chosen, r)]
    return "\n".join(lines)


def suggestion_report(
    work: Path, sources: Sequence[Path] = (), releases: dict[str, Path | None] | None = None
) -> tuple[str, bool]:
    """Every ``fix --suggest`` preview over the gallery (and ``sources``), made for each release of
    ``releases`` (default: the pinned one), its diff applied as printed and trained against the original
    on that release. Each printed preview must be oracle-equal where the original runs; a finding with no
    mechanical move prints no callback and is counted as withheld. Returns the report and whether every
    printed preview was equal or not runnable."""
    sources = [*sorted((ROOT / "examples" / "gallery").glob("*_before.py")), *sources]
    lines: list[str] = []
    ok = True
    for release, folder in (releases or {PINNED: None}).items():
        made = [(s, m) for s in sources for m in applied(s, work / release / s.stem, target=release)]
        shown = [(s, m) for s, m in made if m.program is not None]
        programs = [p for s, m in shown for p in (s, m.program)]
        records = run_specs([judged_spec(p, release=folder) for p in programs])  # type: ignore[arg-type]
        found, good = _judged_previews(shown, records, release)
        lines += found
        lines += [f"withheld for {s.name}: {m.withheld}" for s, m in made if m.program is None]
        lines.append(
            f"suggestions on {release}: {len(shown)} printed, {good[0]} equal, {good[1]} not runnable "
            f"(the original fails there), {len(made) - len(shown)} withheld (no mechanical move)"
        )
        ok = ok and sum(good) == len(shown)
    return "\n".join(lines), ok


def _judged_previews(
    shown: Sequence[tuple[Path, Suggested]], records: Sequence[Record], release: str
) -> tuple[list[str], tuple[int, int]]:
    """A verdict line per applied preview (original, preview: consecutive ``records``) and the counts
    of equal and not runnable ones. A preview whose original fails on ``release`` is not runnable there,
    as ``judge`` has it with no earlier release run: there is nothing to be equal to."""
    lines, equal, idle = [], 0, 0
    for i, (source, moved) in enumerate(shown):
        original = records[2 * i]
        if original.failed:
            idle += 1
            lines.append(f"preview for {source.name} on {release}: not runnable ({_first_line(original)})")
            continue
        named = named_differences(_text(moved.program)) if moved.program is not None else ()
        found = compare(original, records[2 * i + 1], named=named)
        equal += not found
        verdict = "equal" if not found else f"{len(found)} differences"
        lines.append(f"preview for {source.name} on {release}: {verdict}")
        lines += [f"    {d}" for d in found[:8]]
    return lines, (equal, idle)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gallery-only", action="store_true")
    parser.add_argument("--examples-only", action="store_true")
    parser.add_argument(
        "--dev-split",
        action="store_const",
        const="dev",
        dest="split",
        help="only the safe fixes of the dev split's repositories",
    )
    parser.add_argument(
        "--test-split",
        action="store_const",
        const="test",
        dest="split",
        help="the same for the blind test split (run, never read: a measure, never a tuning set)",
    )
    parser.add_argument(
        "--suggestions-only", action="store_true", help="only the gallery's `fix --suggest` callbacks"
    )
    parser.add_argument("--releases", nargs="+", default=list(RELEASES))
    parser.add_argument("--repo", nargs="+", default=[], help="with a split: only these repositories")
    parser.add_argument(
        "--suggest-programs", nargs="*", type=Path, default=[], help="with --suggestions-only: more programs"
    )
    parser.add_argument(
        "--moves",
        action="store_true",
        help=f"with a split: the {MOVES} moves (unsafe), not the safe fixes",
    )
    parser.add_argument(
        "--no-companions",
        action="store_true",
        help="with a split: without the packages installed beside the venv (companions.IMPORTS)",
    )
    args = parser.parse_args(argv)
    releases = {r: (None if r == PINNED else ensure(r)) for r in args.releases}
    if args.split and not args.no_companions:  # inherited by the oracle's child
        os.environ[companions.ENV_VAR] = str(companions.ensure())
    if args.suggestions_only:
        with tempfile.TemporaryDirectory(prefix="tw-oracle-suggest-") as tmp:
            text, ok = suggestion_report(Path(tmp), args.suggest_programs, releases)
        print(text)
        return 0 if ok else 1
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tw-oracle-matrix-") as tmp:
        work = Path(tmp)
        if args.split:
            cases, notes = split_cases(work / args.split, args.split, only=args.repo, moves=args.moves)
        else:
            cases = [] if args.gallery_only else rule_example_cases(work / "rules")
            cases += [] if args.examples_only else gallery_cases(work / "gallery")
        suggested, ok = (
            ("", True)
            if args.examples_only or args.split
            else suggestion_report(work / "suggest", (), releases)
        )
        for group, judged_on in in_ranges([c for c in cases if not c.reason], releases):
            run(group, judged_on)
        for case in cases:  # set aside before the run: not runnable wherever it is in range
            if case.reason and not case.verdicts:
                case.verdicts = {
                    r: "not runnable" for r in releases if Version(r) in SpecifierSet(case.target)
                }
        kind = f"{MOVES} move" if args.moves else "unsafe"
        print("\n".join(t for t in (report(cases, notes, kind), suggested) if t))
    safe = [c for c in cases if not c.unsafe]
    return 0 if ok and all(v != "different" for c in safe for v in c.verdicts.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
