#!/usr/bin/env python3
"""Measure ``trainwright lint`` on the hand-labelled ecosystem corpus (like ruff's ecosystem check).

Maintainer tool, not run in CI. The corpus is ``benchmarks/ecosystem/``: ``repos.toml`` pins public
repositories to the commit that was labelled, ``classes.csv`` lists every Trainer subclass / mixin /
TrainerCallback (and look-alikes, role ``not_target``) in the linted paths, ``labels.csv`` has one row
per method of those classes with the expected codes, ``calls.csv`` one row per keyword argument of a
construction call outside those methods (``Trainer(tokenizer=...)`` in a training script) that TW304 should
report, or that looks removed but is accepted (scheme: ``benchmarks/ecosystem/LABELS.md``).

The code is never vendored. Each repository is read from its bare snapshot in
``/work/.mirror/<owner>+<name>/repo`` (made with the ``fetch`` tool: ``fetch github:<owner>/<name>``;
this script cannot fetch). The installed TRL (``source = "installed:trl"``) is copied from
site-packages. Each labelled commit is exported into a temporary folder
(``git --git-dir=<mirror> archive <commit> | tar -x``, or blob by blob when the snapshot lacks some
large files), linted with

    trainwright lint --format json --exit-zero --transformers-version 5.24.0 --trl-version 1.16.0 PATHS

and every finding is mapped to the labelled method whose ``[line, end_line]`` holds it. Per rule family
(TW1xx, TW301/302/304, TW2xx, TW303, TW4xx) it prints TP, FP, FN, precision and recall, then every FP and
FN with its location. Scoring is per (method, code); TW2xx counts per method and family, and is a TP
only when the finding's line is one of the ``obs=`` lines of a method labelled CALLBACK (a TW2xx
finding elsewhere in that method is an FP, "points at the wrong statement"; the lenient figure, any
line of the method, is printed next to it). A TW304 finding outside every labelled method is scored
against calls.csv by (path, line, keyword): a TP on a ``TW304`` row, an FP otherwise; every ``TW304`` row
without a finding is an FN of the TW301/302/304 family. Any other finding outside every labelled method is
an FP of its family (on a ``not_target`` class, on an unlabelled class, or at module level). Repeated
finding records (same code, file, line, column and message) are scored and listed once.

When ``trainwright lint --statistics --format json`` is available (it prints
``{"rules": ..., "classes": [{"path", "line", "class", "role"}], "unresolved": [...]}``), a recognition
table compares the classes the linter recognised with classes.csv; otherwise it says
"recognition: needs --statistics".

    .venv/bin/python scripts/ecosystem_check.py                 # every repository of the dev split
    .venv/bin/python scripts/ecosystem_check.py --split test    # the blind test split
    .venv/bin/python scripts/ecosystem_check.py --repo THUDM/LongAlign --keep
    .venv/bin/python scripts/ecosystem_check.py --markdown > /tmp/eco.md   # tables for docs/lint-accuracy.md
"""

from __future__ import annotations

import argparse
import ast
import csv
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "ecosystem"
# The dev split is the corpus the rules are tuned on; the test split was labelled blind, before any linting,
# and has no calls.csv (TW304 call-site findings are not scored on it). Never tune a rule on the test split.
SPLITS = {"dev": BENCH, "test": BENCH / "test"}
MIRROR_ROOT = Path("/work/.mirror")
TRANSFORMERS_TARGET = "5.24.0"
TRL_TARGET = "1.16.0"

FAMILIES = ("TW1xx", "TW301/302/304", "TW2xx", "TW303", "TW4xx")
ROLES = ("trainer", "mixin", "callback")


def family_of(code: str) -> str | None:
    if code.startswith("TW1"):
        return "TW1xx"
    if code in ("TW301", "TW302", "TW304"):  # signatures and calls that break on the target releases
        return "TW301/302/304"
    if code.startswith("TW2"):
        return "TW2xx"
    if code == "TW303":
        return "TW303"
    if code.startswith("TW4"):
        return "TW4xx"
    return None  # TW000 and anything new: reported separately


# ---------------------------------------------------------------------------------------------- corpus


@dataclass
class Method:
    repo: str
    path: str
    cls: str
    name: str
    line: int
    end: int
    expected: dict[str, set[str]]  # family -> codes ("TW2" stands for any TW2xx)
    obs: set[int]
    hard_negative: bool
    tw2: str
    notes: str

    def where(self) -> str:
        return f"{self.repo} {self.path}:{self.line} {self.cls}.{self.name}"


@dataclass
class ClassRow:
    repo: str
    path: str
    line: int
    name: str
    role: str
    end: int | None = None  # filled from the exported source


@dataclass
class CallRow:
    """One keyword argument of a construction call outside the labelled methods (``calls.csv``)."""

    repo: str
    path: str
    line: int  # the line of the ``keyword=`` itself
    keyword: str
    expected: str  # "TW304" or "" (a hard negative: looks removed, is accepted)
    notes: str

    def where(self) -> str:
        return f"{self.repo} {self.path}:{self.line} `{self.keyword}=`"


def parse_obs(notes: str) -> set[int]:
    m = re.search(r"obs=([0-9][0-9,\-]*)", notes)
    out: set[int] = set()
    if not m:
        return out
    for part in m.group(1).strip(",-").split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            continue
        out.update(range(lo, hi + 1))
    return out


def load_corpus(bench: Path):
    cfg = tomllib.loads((bench / "repos.toml").read_text())
    repos = cfg.get("repo", [])
    classes: list[ClassRow] = []
    with open(bench / "classes.csv", newline="") as f:
        for r in csv.DictReader(f):
            classes.append(ClassRow(r["repo"], r["path"], int(r["line"]), r["class"], r["role"]))
    methods: list[Method] = []
    with open(bench / "labels.csv", newline="") as f:
        for r in csv.DictReader(f):
            exp: dict[str, set[str]] = defaultdict(set)
            for col in ("tw1", "tw3", "tw303", "tw4"):
                for code in r[col].split():
                    fam = family_of(code)
                    if fam:
                        exp[fam].add(code)
            if r["tw2"] == "CALLBACK":
                exp["TW2xx"].add("TW2")
            methods.append(
                Method(
                    r["repo"],
                    r["path"],
                    r["class"],
                    r["method"],
                    int(r["line"]),
                    int(r["end_line"]),
                    dict(exp),
                    parse_obs(r["notes"]) if r["tw2"] == "CALLBACK" else set(),
                    r["hard_negative"] == "1",
                    r["tw2"],
                    r["notes"],
                )
            )
    return repos, classes, methods


def load_calls(bench: Path) -> list[CallRow]:
    """``calls.csv``: TW304 labels for construction calls outside the labelled methods (scripts,
    functions, classes that are not in classes.csv). Absent file: no call-site labels."""
    path = bench / "calls.csv"
    if not path.exists():
        return []
    rows: list[CallRow] = []
    seen: set[tuple[str, str, int, str]] = set()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            expected = r["expected"].strip()
            if expected not in ("", "TW304"):
                raise SystemExit(f"calls.csv: expected must be TW304 or empty, got {expected!r} ({r})")
            key = (r["repo"], r["path"], int(r["line"]), r["keyword"])
            if key in seen:
                raise SystemExit(f"calls.csv: duplicate row {key}")
            seen.add(key)
            rows.append(CallRow(r["repo"], r["path"], int(r["line"]), r["keyword"], expected, r["notes"]))
    return rows


# ---------------------------------------------------------------------------------------------- export


def mirror_dir(name: str, mirror_root: Path) -> Path:
    return mirror_root / name.replace("/", "+") / "repo"


def has_commit(gd: Path, commit: str) -> bool:
    p = subprocess.run(
        ["git", "--git-dir", str(gd), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return p.returncode == 0


def export_git(gd: Path, commit: str, dest: Path) -> str:
    """Export ``commit`` into ``dest``. Returns '' or, when ``git archive`` failed because the snapshot lacks
    some (large) objects, how many files the blob-by-blob export had to leave out."""
    dest.mkdir(parents=True, exist_ok=True)
    arch = subprocess.Popen(
        ["git", "--git-dir", str(gd), "archive", commit], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    tar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=arch.stdout, capture_output=True, check=False)
    arch.stdout.close()
    arch.stderr.read()
    arch.wait()
    if arch.returncode == 0 and tar.returncode == 0:
        return ""
    # Snapshots may list large files whose objects are absent: export the blobs that exist.
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    ls = subprocess.run(
        ["git", "--git-dir", str(gd), "ls-tree", "-r", "-z", commit], capture_output=True, check=False
    )
    entries = []
    for rec in ls.stdout.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, typ, sha = meta.split()
        if typ == b"blob" and mode != b"120000":
            entries.append((sha.decode(), path.decode("utf8", "surrogateescape")))
    check = subprocess.run(
        ["git", "--git-dir", str(gd), "cat-file", "--batch-check"],
        input="".join(s + "\n" for s, _ in entries).encode(),
        capture_output=True,
        check=False,
    )
    present = [e for e, st in zip(entries, check.stdout.decode().splitlines()) if not st.endswith("missing")]
    missing = len(entries) - len(present)
    proc = subprocess.Popen(
        ["git", "--git-dir", str(gd), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    for sha, path in present:
        proc.stdin.write((sha + "\n").encode())
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    proc.stdin.close()
    proc.wait()
    return f"{missing} of {len(entries)} files absent" if missing else "exported blob by blob"


def installed_trl(trl_dir: str | None) -> tuple[Path | None, str | None]:
    if trl_dir:
        return Path(trl_dir), None
    spec = importlib.util.find_spec("trl")
    if spec is None or not spec.submodule_search_locations:
        return None, None
    try:
        ver = importlib.metadata.version("trl")
    except importlib.metadata.PackageNotFoundError:
        ver = None
    return Path(next(iter(spec.submodule_search_locations))), ver


# ---------------------------------------------------------------------------------------------- linting


def trainwright_cmd(given: str | None) -> list[str]:
    if given:
        return given.split()
    sibling = Path(sys.executable).with_name("trainwright")
    if sibling.exists():
        return [str(sibling)]
    found = shutil.which("trainwright")
    if found:
        return [found]
    return [sys.executable, "-m", "trainwright"]


def _rel(root: Path, p: Path) -> str:
    try:
        return os.path.relpath(os.path.realpath(p), os.path.realpath(root)).replace(os.sep, "/")
    except ValueError:
        return str(p)


class PathResolver:
    """Map a reported filename to a path relative to the export root.

    Reported paths may be absolute, relative to the cwd (the export root), or relative to a project root
    the linter found below it (a folder with its own setup.py/pyproject.toml, e.g. ``src/r1-v``). A relative
    name is tried against the export root first, then against every folder between it and the linted
    paths; the first candidate that exists inside a linted path wins.
    """

    def __init__(self, root: Path, paths: list[str]):
        self.root = root
        self.linted = [p.rstrip("/") for p in paths] or ["."]
        bases = [root]
        for lp in self.linted:
            cur = root / lp
            chain = []
            while True:
                if cur.is_dir():
                    chain.append(cur)
                if os.path.realpath(cur) == os.path.realpath(root) or cur == cur.parent:
                    break
                cur = cur.parent
            bases += [b for b in reversed(chain) if b not in bases]
        self.bases = bases

    def inside(self, rel: str) -> bool:
        return any(lp == "." or rel == lp or rel.startswith(lp + "/") for lp in self.linted)

    def __call__(self, filename: str) -> str:
        p = Path(filename)
        if p.is_absolute():
            rel = _rel(self.root, p)
            if p.exists() or rel.startswith(".."):
                return rel
            p = Path(rel)  # under the export root but not there: resolve the tail like a relative name
        first = None
        for base in self.bases:
            cand = base / p
            if cand.exists():
                rel = _rel(self.root, cand)
                if self.inside(rel):
                    return rel
                first = first or rel
        return first or _rel(self.root, self.root / p)


def finding_fields(f: dict, resolve: PathResolver) -> tuple[str, str, int, str]:
    code = f.get("code") or f.get("rule") or f.get("rule_id") or "?"
    fn = f.get("filename") or f.get("path") or f.get("file") or ""
    loc = f.get("location")
    if isinstance(loc, dict) and loc.get("row") is not None:
        line = int(loc["row"])
    else:
        line = int(f.get("line") or f.get("row") or 0)
    return code, resolve(fn), line, f.get("message", "")


_KEYWORD = re.compile(r"`(\w+)=`")


def finding_keyword(message: str) -> str | None:
    """The keyword a TW304 finding is about: its message starts with `` `tokenizer=` is not accepted``."""
    m = _KEYWORD.search(message)
    return m.group(1) if m else None


#: appended to a TW2xx finding's message when it carries no move (reported only with ``--preview``)
UNMOVED = " [no move written]"


def unique_findings(
    findings: list[dict], resolve: PathResolver
) -> tuple[list[tuple[str, str, int, str]], int]:
    """(code, path, line, message) per distinct finding, in order, and how many records were repeats.

    One finding is one (code, resolved path, line, column, message): the same report arriving twice
    (two records that name the same file differently, e.g. relative to two project roots, or a repeated
    record) is scored and listed once."""
    out: list[tuple[str, str, int, str]] = []
    seen: set[tuple[str, str, int, object, str]] = set()
    for f in findings:
        code, path, line, msg = finding_fields(f, resolve)
        if str(code).startswith("TW2") and "fix" in f and f["fix"] is None:
            msg += UNMOVED  # only with --preview: a finding whose move the planner refused
        loc = f.get("location")
        col = loc.get("column") if isinstance(loc, dict) else f.get("column")
        key = (code, path, line, col, msg)
        if key in seen:
            continue
        seen.add(key)
        out.append((code, path, line, msg))
    return out, len(findings) - len(out)


def run_lint(cmd: list[str], root: Path, paths: list[str], extra: list[str], timeout: int):
    args = cmd + [
        "lint",
        *extra,
        "--transformers-version",
        TRANSFORMERS_TARGET,
        "--trl-version",
        TRL_TARGET,
        *(paths or ["."]),
    ]
    try:
        p = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout}s"
    try:
        data = json.loads(p.stdout) if p.stdout.strip() else None
    except json.JSONDecodeError:
        data = None
    if data is None:
        tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"exit {p.returncode}: {tail[:200]}"
    return data, ""


def findings_list(data) -> list[dict]:
    if isinstance(data, list):
        return [d for d in data if isinstance(d, dict)]
    if isinstance(data, dict):
        for key in ("findings", "diagnostics", "results", "violations"):
            if isinstance(data.get(key), list):
                return data[key]
    return []


# ---------------------------------------------------------------------------------------------- scoring


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    lenient_tp: int = 0  # TW2xx: finding anywhere in a CALLBACK method
    fps: list[str] = field(default_factory=list)
    fns: list[str] = field(default_factory=list)
    # rule code -> the distinct patterns (``pattern_of``) its true / false positives cover
    tp_patterns: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    fp_patterns: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    tp_codes: Counter = field(default_factory=Counter)
    fp_codes: Counter = field(default_factory=Counter)
    # (rule, overridden method, what the code does) -> [TP, FP]: a rule's variants, by the method whose
    # events it moves code to and the message's verb (``kind_of``) (issue 33: a variant whose test-split
    # precision is under 0.90 is a preview variant)
    variants: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def hit(self, code: str, method: str, message: str, right: bool) -> None:
        """Count one finding's verdict per rule code and remember the pattern it covers."""
        (self.tp_codes if right else self.fp_codes)[code] += 1
        self.variants[(code, method.rsplit(".", 1)[-1], kind_of(message))][0 if right else 1] += 1
        (self.tp_patterns if right else self.fp_patterns)[code].add(pattern_of(method, message))


_VARYING = re.compile(r"`[^`]*`|\(lines? [^)]*\)|\d+(?:[.,–-]\d+)*")


def pattern_of(method: str, message: str) -> str:
    """What kind of code a finding is about, for "how many distinct patterns": the overridden method and
    the message's headline (up to its advice) with names, numbers and line lists taken out. Two findings
    on copies of the same code in two files are one pattern; the same rule on a ``log`` and a
    ``training_step`` override, or on timing and on gated output, are two."""
    head = message.split(";")[0]
    return f"{method}: " + " ".join(_VARYING.sub("_", head).split())


_KIND = re.compile(r"^`[^`]*` (\w+)")


def kind_of(message: str) -> str:
    """What a TW2xx finding's code does, as its message's first verb says: ``times`` (a timer around
    ``super()``), ``advances`` (a schedule), ``runs`` (gated side effects), ``adds`` (output around the
    call), ``keeps`` (a record). Why: one overridden method holds code of several kinds, and issue 33's
    preview variants are judged by what the rule claims, not only where."""
    found = _KIND.match(message)
    kind = found.group(1) if found else "-"
    return f"{kind}, no move" if message.endswith(UNMOVED) else kind


def enclosing_classes(src: str) -> list[tuple[int, int, str]]:
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return []
    return [
        (n.lineno, n.end_lineno or n.lineno, n.name) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
    ]


def score_repo(
    name,
    root,
    resolver,
    findings,
    methods,
    classes,
    tallies,
    other,
    hn_hits,
    calls=(),
    call_hits=None,
    call_labels=True,
):
    """Score one repository's findings (already de-duplicated: ``unique_findings``) into ``tallies``.

    Inside a labelled method: per (method, code) against labels.csv. Outside every labelled method a
    TW304 finding is scored against calls.csv by (path, line, keyword): a TP on a ``TW304`` row, an FP
    otherwise (a hard-negative row is named in the FP line); every ``TW304`` row left without a finding
    is an FN. Any other finding outside the labelled methods is an FP of its family. Without call-site
    labels (``call_labels`` false: the split has no calls.csv) a TW304 finding outside the labelled
    methods is not scored, only listed."""
    by_path: dict[str, list[Method]] = defaultdict(list)
    for m in methods:
        by_path[m.path].append(m)
    where = _Where(root, classes)
    outside = _Outside(name, tallies, {(c.path, c.line, c.keyword): c for c in calls}, where, call_hits)
    # method -> family -> list of (code, line, message)
    hits: dict[int, dict[str, list[tuple[str, int, str]]]] = defaultdict(lambda: defaultdict(list))
    for code, path, line, msg in findings:
        fam = family_of(code)
        if fam is None:
            other[code].append(f"{name} {path}:{line} {msg[:100]}")
            continue
        owner = [m for m in by_path.get(path, []) if m.line <= line <= m.end]
        if not owner and code == "TW304" and not call_labels:
            # A split without calls.csv (the test split) has no call-site labels: not scored, only listed.
            other["TW304 call site (no calls.csv, not scored)"].append(f"{name} {path}:{line} {msg[:100]}")
            continue
        if not owner:
            outside.score(code, fam, path, line, msg)
            continue
        m = min(owner, key=lambda m: m.end - m.line)  # innermost (nested functions are not labelled)
        hits[id(m)][fam].append((code, line, msg))
    t = tallies[family_of("TW304")]
    for c in calls:
        if c.expected == "TW304" and (c.path, c.line, c.keyword) not in outside.matched:
            t.fn += 1
            t.fns.append(f"TW304 {c.where()} [call site] ({_short(c.notes)})")
    for m in methods:
        got = hits.get(id(m), {})
        for fam in FAMILIES:
            expected = m.expected.get(fam, set())
            found = got.get(fam, [])
            if fam == "TW2xx":
                _score_callback_method(m, expected, found, tallies[fam], hn_hits)
            else:
                _score_method_codes(m, expected, found, tallies[fam])


class _Where:
    """What holds a line of a file, for an FP outside the labelled methods: a labelled class (outside its
    methods), a ``not_target`` one, an unlabelled class or the module (each file read once)."""

    def __init__(self, root: Path, classes: list[ClassRow]) -> None:
        self.root = root
        self.by_path: dict[str, list[ClassRow]] = defaultdict(list)
        for c in classes:
            self.by_path[c.path].append(c)
        self.src_classes: dict[str, list[tuple[int, int, str]]] = {}

    def __call__(self, path: str, line: int) -> str:
        if path not in self.src_classes:
            try:
                self.src_classes[path] = enclosing_classes(
                    (self.root / path).read_text(encoding="utf8", errors="replace")
                )
            except OSError:
                self.src_classes[path] = []
        inner = [c for c in self.src_classes[path] if c[0] <= line <= c[1]]
        if not inner:
            return "module level"
        lo, _, cname = max(inner, key=lambda c: c[0])
        for c in self.by_path.get(path, []):
            if c.line == lo:
                return (
                    f"{c.role} class {cname} (outside its labelled methods)"
                    if c.role != "not_target"
                    else f"not_target class {cname}"
                )
        return f"unlabelled class {cname}"


@dataclass
class _Outside:
    """Scores findings outside every labelled method: a TW304 against calls.csv (one verdict per path,
    line and keyword), anything else an FP of its family."""

    name: str
    tallies: dict
    call_rows: dict
    where: _Where
    call_hits: list | None
    matched: set = field(default_factory=set)

    def score(self, code: str, fam: str, path: str, line: int, msg: str) -> None:
        t = self.tallies[fam]
        kw = finding_keyword(msg) if code == "TW304" else None
        row = self.call_rows.get((path, line, kw)) if kw else None
        if kw is not None:  # one verdict per (path, line, keyword), however many records say it
            if (path, line, kw) in self.matched:
                return
            self.matched.add((path, line, kw))
        if row is not None and row.expected == "TW304":
            t.tp += 1
            t.hit(code, "call site", msg, True)
            return
        t.fp += 1
        t.hit(code, self.where(path, line), msg, False)
        tag = (
            f"hard negative (calls.csv: {_short(row.notes, 110)})"
            if row is not None
            else self.where(path, line)
        )
        t.fps.append(f"{code} {self.name} {path}:{line} [{tag}] {msg[:120]}")
        if row is not None and self.call_hits is not None:
            self.call_hits.append(row.where())


def _score_callback_method(m: Method, expected: set, found: list, t: Tally, hn_hits: list) -> None:
    """TW2xx per method: a TP only on one of the ``obs=`` lines of a method labelled CALLBACK."""
    if "TW2" in expected:
        right = [h for h in found if h[1] in m.obs]
        if found:
            t.lenient_tp += 1
        if right:
            t.tp += 1
            t.hit(right[0][0], m.name, right[0][2], True)
        else:
            t.fn += 1
            t.fns.append(
                f"TW2xx {m.where()} obs={_ranges(m.obs)}"
                + (f" (reported at {', '.join(str(h[1]) for h in found)})" if found else "")
            )
        for h in dict.fromkeys((h[0], h[1], h[2]) for h in found):  # once per statement
            if h[1] not in m.obs:
                t.fp += 1
                t.hit(h[0], m.name, h[2], False)
                t.fps.append(
                    f"{h[0]} {m.where()} line {h[1]}: points at the wrong statement (obs={_ranges(m.obs)})"
                )
    elif found:
        t.fp += 1
        t.hit(found[0][0], m.name, found[0][2], False)
        codes = ",".join(sorted({h[0] for h in found}))
        tag = "hard negative" if m.hard_negative else (m.tw2 or "callback-class method")
        t.fps.append(f"{codes} {m.where()} line {found[0][1]} [{tag}] {found[0][2][:100]}")
        if m.hard_negative:
            hn_hits.append(m.where())


def _score_method_codes(m: Method, expected: set, found: list, t: Tally) -> None:
    """The other families per (method, code) against labels.csv."""
    codes_found = {h[0] for h in found}
    for code in sorted(expected | codes_found):
        if code in expected and code in codes_found:
            t.tp += 1
            h = next(h for h in found if h[0] == code)
            t.hit(code, m.name, h[2], True)
        elif code in expected:
            t.fn += 1
            t.fns.append(f"{code} {m.where()} ({_short(m.notes)})")
        else:
            t.fp += 1
            h = next(h for h in found if h[0] == code)
            t.hit(code, m.name, h[2], False)
            t.fps.append(f"{code} {m.where()} line {h[1]}: {h[2][:120]}")


def _ranges(lines: set[int]) -> str:
    out, run = [], []
    for n in sorted(lines):
        if run and n == run[-1] + 1:
            run.append(n)
        else:
            if run:
                out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def _short(notes: str, n: int = 90) -> str:
    notes = " ".join(notes.split())
    return notes if len(notes) <= n else notes[: n - 1] + "…"


def pr(tp: int, fp: int, fn: int) -> tuple[str, str]:
    p = f"{tp / (tp + fp):.2f}" if tp + fp else "n/a"
    r = f"{tp / (tp + fn):.2f}" if tp + fn else "n/a"
    return p, r


# ---------------------------------------------------------------------------------------------- main


@dataclass
class Accumulated:
    """What a run gathers over the repositories, for :func:`report`."""

    tallies: dict[str, Tally] = field(default_factory=lambda: {fam: Tally() for fam in FAMILIES})
    other: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    hn_hits: list[str] = field(default_factory=list)
    call_hits: list[str] = field(default_factory=list)  # calls.csv hard negatives given a TW304 finding
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes_out: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    recognition: dict[str, tuple[list[dict], list[dict]]] = field(default_factory=dict)
    stats_ok: bool | None = None  # None: not tried, False: unavailable
    linted: list[str] = field(default_factory=list)
    per_repo: list[tuple[str, int, int, int]] = field(default_factory=list)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repo", action="append", metavar="NAME", help="only this repository (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep the exported trees (path is printed)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    ap.add_argument(
        "--split",
        choices=sorted(SPLITS),
        default="dev",
        help="dev: the corpus rules are tuned on; test: the blind split (default: %(default)s)",
    )
    ap.add_argument("--bench", type=Path, help="corpus folder (overrides --split)")
    ap.add_argument(
        "--mirror-root", type=Path, default=MIRROR_ROOT, help="snapshot root (default: %(default)s)"
    )
    ap.add_argument("--trainwright", help="linter command (default: trainwright next to this interpreter)")
    ap.add_argument(
        "--trl-dir", help="TRL package folder for the installed:trl entry (default: importable trl)"
    )
    ap.add_argument("--jobs", type=int, help="pass -j JOBS to the linter (default: the linter's own default)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per lint run (default: %(default)s)")
    ap.add_argument("--no-lists", action="store_true", help="omit the FP/FN lists")
    ap.add_argument(
        "--preview", action="store_true", help="lint with --preview (the preview rules and variants)"
    )
    args = ap.parse_args(argv)
    if args.bench is None:
        args.bench = SPLITS[args.split]

    repos, classes, methods = load_corpus(args.bench)
    calls = load_calls(args.bench)
    names = [r["name"] for r in repos]
    if args.repo:
        unknown = [n for n in args.repo if n not in names]
        if unknown:
            print(f"unknown repo(s): {', '.join(unknown)}; known: {', '.join(names)}", file=sys.stderr)
            return 2
        repos = [r for r in repos if r["name"] in args.repo]

    cmd = trainwright_cmd(args.trainwright)
    workdir = Path(tempfile.mkdtemp(prefix="tw-ecosystem-"))
    acc = Accumulated()

    try:
        for r in repos:
            dest = workdir / r["name"].replace("/", "+")
            paths = _export(r, args, dest, acc)
            if paths is not None:
                _lint_and_score(r["name"], dest, paths, args, cmd, (methods, classes, calls), acc)
    finally:
        if acc.partial:
            acc.notes_out.insert(
                0,
                "git archive failed (snapshot lacks large objects), exported the blobs present: "
                + ", ".join(acc.partial),
            )
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    report(args, repos, classes, methods, calls, acc)
    return 0


def _export(r: dict, args: argparse.Namespace, dest: Path, acc: Accumulated) -> list[str] | None:
    """Export repository ``r`` at its labelled commit into ``dest`` (the installed TRL: a copy); the
    listed paths present there ([]: the whole tree), or None when there is nothing to lint (``acc``
    says why)."""
    name = r["name"]
    if r.get("source") == "installed:trl":
        trl_dir, ver = installed_trl(args.trl_dir)
        want = r.get("version", TRL_TARGET)
        if trl_dir is None or not trl_dir.is_dir():
            acc.missing.append(
                f"{name}: TRL is not importable here (run with the project's .venv, or --trl-dir)"
            )
            return None
        if ver is not None and ver != want and not args.trl_dir:
            acc.missing.append(
                f"{name}: installed TRL is {ver}, labels are for {want} (pip install trl=={want})"
            )
            return None
        shutil.copytree(trl_dir, dest / "trl", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        gd = mirror_dir(name, args.mirror_root)
        if not gd.is_dir():
            acc.missing.append(f"{name}: no snapshot at {gd} -- call the fetch tool: fetch github:{name}")
            return None
        if not has_commit(gd, r["commit"]):
            acc.missing.append(
                f"{name}: snapshot at {gd} lacks commit {r['commit'][:12]} "
                f"(fetch github:{name} again, or re-label at the new HEAD)"
            )
            return None
        note = export_git(gd, r["commit"], dest)
        if note:
            acc.partial.append(f"{name} ({note})")
    paths = list(r.get("paths") or [])
    absent = [p for p in paths if not (dest / p).exists()]
    if absent:
        acc.errors.append(f"{name}: listed paths absent from the export: {', '.join(absent)}")
        paths = [p for p in paths if p not in absent]
        if not paths:
            return None
    return paths


def _check_calls(
    name: str, dest: Path, r_methods: list[Method], r_calls: list[CallRow], acc: Accumulated
) -> None:
    """calls.csv rows must lie outside every labelled method, in a file of the export."""
    for c in r_calls:
        inside = [m for m in r_methods if m.path == c.path and m.line <= c.line <= m.end]
        if inside:
            acc.errors.append(
                f"calls.csv row {c.where()} lies in labelled method {inside[0].where()}: label it there"
            )
        if not (dest / c.path).is_file():
            acc.errors.append(f"calls.csv row {c.where()}: no such file in the export")


def _lint_and_score(
    name: str,
    dest: Path,
    paths: list[str],
    args: argparse.Namespace,
    cmd: list[str],
    corpus: tuple[list[Method], list[ClassRow], list[CallRow]],
    acc: Accumulated,
) -> None:
    """Lint one exported repository, score its findings against its labels, and (once the linter has
    ``--statistics``) record which classes it recognised."""
    extra_j = (["-j", str(args.jobs)] if args.jobs else []) + (["--preview"] if args.preview else [])
    data, err = run_lint(cmd, dest, paths, ["--format", "json", "--exit-zero", *extra_j], args.timeout)
    if data is None:
        acc.errors.append(f"{name}: lint failed: {err}")
        return
    resolver = PathResolver(dest, paths)
    found, repeats = unique_findings(findings_list(data), resolver)
    if repeats:
        acc.notes_out.append(
            f"{name}: {repeats} repeated finding record(s) ignored (same code, file, line, column, message)"
        )
    acc.linted.append(name)
    methods, classes, calls = corpus
    r_methods = [m for m in methods if m.repo == name]
    r_classes = [c for c in classes if c.repo == name]
    r_calls = [c for c in calls if c.repo == name]
    _check_calls(name, dest, r_methods, r_calls, acc)
    before = sum(t.fp for t in acc.tallies.values()), sum(t.fn for t in acc.tallies.values())
    score_repo(
        name,
        dest,
        resolver,
        found,
        r_methods,
        r_classes,
        acc.tallies,
        acc.other,
        acc.hn_hits,
        r_calls,
        acc.call_hits,
        call_labels=(args.bench / "calls.csv").exists(),
    )
    after = sum(t.fp for t in acc.tallies.values()), sum(t.fn for t in acc.tallies.values())
    acc.per_repo.append((name, len(found), after[0] - before[0], after[1] - before[1]))
    if acc.stats_ok is not False:
        sdata, _ = run_lint(
            cmd, dest, paths, ["--statistics", "--format", "json", "--exit-zero", *extra_j], args.timeout
        )
        if isinstance(sdata, dict) and isinstance(sdata.get("classes"), list):
            acc.stats_ok = True
            acc.recognition[name] = (
                [dict(c, path=resolver(c.get("path", ""))) for c in sdata["classes"]],
                [dict(u, path=resolver(u.get("path", ""))) for u in sdata.get("unresolved", [])],
            )
        else:
            acc.stats_ok = False
    if args.keep:
        acc.notes_out.append(f"{name}: export kept at {dest}")


def table(md: bool, header: list[str], rows: list[list[str]]) -> str:
    if md:
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
        return "\n".join(out)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(
        [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
        + [fmt.format(*map(str, row)) for row in rows]
    )


def report(args, repos, classes, methods, calls, acc: Accumulated) -> None:
    md = args.markdown
    h = (lambda s: f"\n## {s}\n") if md else (lambda s: f"\n== {s} ==")
    lab = [m for m in methods if m.repo in acc.linted]
    site_rows = [c for c in calls if c.repo in acc.linted]
    _report_corpus(h, repos, classes, lab, site_rows, acc)
    _report_families(md, h, lab, site_rows, acc)
    _report_recognition(args, h, classes, acc)
    if not args.no_lists:
        _report_lists(md, h, acc)


def _report_corpus(h, repos, classes, lab, site_rows, acc: Accumulated) -> None:
    """What was linted: repositories, classes and labels, and what could not be."""
    sel = {r["name"] for r in repos}
    print(h("Corpus"))
    roles = Counter(c.role for c in classes if c.repo in acc.linted)
    print(
        f"repositories linted: {len(acc.linted)} of {len(sel)}; classes: "
        + ", ".join(f"{roles[k]} {k}" for k in (*ROLES, "not_target"))
        + f"; labelled methods: {len(lab)}; CALLBACK: {sum('TW2xx' in m.expected for m in lab)}; "
        f"hard negatives: {sum(m.hard_negative for m in lab)}; call-site keywords (calls.csv): "
        f"{sum(c.expected == 'TW304' for c in site_rows)} TW304, {sum(not c.expected for c in site_rows)} hard negatives"
    )
    for line in acc.missing:
        print(f"missing: {line}")
    for line in acc.errors:
        print(f"error: {line}")
    for line in acc.notes_out:
        print(f"note: {line}")


def _report_families(md: bool, h, lab, site_rows, acc: Accumulated) -> None:
    """Precision and recall per rule family and per rule, hard negatives, and per repository."""
    print(h(f"Findings per rule family (transformers {TRANSFORMERS_TARGET}, TRL {TRL_TARGET})"))
    rows = []
    for fam in FAMILIES:
        t = acc.tallies[fam]
        p, r = pr(t.tp, t.fp, t.fn)
        expected = sum(len(m.expected.get(fam, ())) for m in lab)
        if fam == family_of("TW304"):
            expected += sum(c.expected == "TW304" for c in site_rows)
        extra = ""
        if fam == "TW2xx":
            _, lr = pr(t.lenient_tp, 0, expected - t.lenient_tp)
            extra = f"{t.lenient_tp} ({lr})"
        rows.append([fam, expected, t.tp, t.fp, t.fn, p, r, extra])
    print(
        table(
            md,
            ["family", "expected", "TP", "FP", "FN", "precision", "recall", "TW2xx any line (recall)"],
            rows,
        )
    )
    rows = []
    for fam in FAMILIES:
        t = acc.tallies[fam]
        for code in sorted(set(t.tp_codes) | set(t.fp_codes)):
            rows.append(
                [code, t.tp_codes[code], len(t.tp_patterns[code]), t.fp_codes[code], len(t.fp_patterns[code])]
            )
    if rows:
        print(h("Per rule: findings and the distinct patterns they cover"))
        print(table(md, ["rule", "TP", "TP patterns", "FP", "FP patterns"], rows))
    variants = sorted(
        (code, method, kind, tp, fp)
        for t in acc.tallies.values()
        for (code, method, kind), (tp, fp) in t.variants.items()
        if code.startswith("TW2")
    )
    if variants:  # counts only, no location: what the preview rule of issue 33 reads
        print(h("TW2xx variants (rule, overridden method, what the code does)"))
        rows = [[c, m, k, tp, fp, f"{tp / (tp + fp):.2f}"] for c, m, k, tp, fp in variants]
        print(table(md, ["rule", "method", "kind", "TP", "FP", "precision"], rows))
    hn_total = sum(m.hard_negative for m in lab)
    print(f"\nhard negatives given a TW2xx finding: {len(acc.hn_hits)} of {hn_total}")
    if site_rows:
        print(
            f"call-site hard negatives (calls.csv) given a TW304 finding: {len(acc.call_hits)} of "
            f"{sum(not c.expected for c in site_rows)}"
        )
    if acc.other:
        print(
            "other codes (not scored): " + ", ".join(f"{k} x{len(v)}" for k, v in sorted(acc.other.items()))
        )

    if acc.per_repo:
        print(h("Per repository"))
        print(
            table(md, ["repository", "findings", "FP", "FN"], [[n, a, b, c] for n, a, b, c in acc.per_repo])
        )


def _report_recognition(args, h, classes, acc: Accumulated) -> None:
    """Which labelled classes the linter recognised (``--statistics``), and what else it took for one."""
    md = args.markdown
    print(h("Recognition"))
    if acc.stats_ok is not True:
        print("recognition: needs --statistics (this trainwright has no `lint --statistics --format json`)")
    else:
        rows = []
        misses, extras = [], []
        want_all = [c for c in classes if c.repo in acc.recognition]
        for role in ROLES:
            want = [c for c in want_all if c.role == role]
            got = 0
            for c in want:
                rec = acc.recognition[c.repo][0]
                if any(
                    x.get("path") == c.path and (x.get("line") == c.line or x.get("class") == c.name)
                    for x in rec
                ):
                    got += 1
                else:
                    misses.append(f"{c.role} {c.repo} {c.path}:{c.line} {c.name}")
            rows.append([role, len(want), got, len(want) - got, pr(got, 0, len(want) - got)[1]])
        for name, (rec, unresolved) in acc.recognition.items():
            listed = {(c.path, c.line): c for c in classes if c.repo == name}
            by_name = {(c.path, c.name): c for c in classes if c.repo == name}
            for x in rec:
                c = listed.get((x.get("path"), x.get("line"))) or by_name.get((x.get("path"), x.get("class")))
                if c is None:
                    extras.append(
                        f"unlisted {name} {x.get('path')}:{x.get('line')} {x.get('class')} as {x.get('role')}"
                    )
                elif c.role == "not_target":
                    extras.append(
                        f"not_target {name} {x.get('path')}:{x.get('line')} {x.get('class')} as {x.get('role')}"
                    )
        rows.append(
            [
                "not_target recognised (should be 0)",
                sum(c.role == "not_target" for c in want_all),
                sum(e.startswith("not_target") for e in extras),
                "",
                "",
            ]
        )
        print(table(md, ["role", "labelled", "recognised", "missed", "recall"], rows))
        if not args.no_lists:
            for line in misses:
                print(f"- missed: {line}" if md else f"  missed: {line}")
            for line in extras:
                print(f"- extra: {line}" if md else f"  extra: {line}")
            for name, (_, unresolved) in acc.recognition.items():
                for u in unresolved:
                    s = f"unresolved: {name} {u.get('path')}:{u.get('line')} {u.get('class')} ({u.get('reason')})"
                    print(f"- {s}" if md else f"  {s}")


def _report_lists(md: bool, h, acc: Accumulated) -> None:
    """Every FP and FN per family, and the findings of codes that are not scored."""
    for fam in FAMILIES:
        t = acc.tallies[fam]
        if not (t.fps or t.fns):
            continue
        print(h(f"{fam}: {len(t.fps)} FP, {len(t.fns)} FN"))
        for line in t.fps:
            print(f"- FP {line}" if md else f"  FP  {line}")
        for line in t.fns:
            print(f"- FN {line}" if md else f"  FN  {line}")
    for code, lines in sorted(acc.other.items()):
        print(h(f"{code} (not scored): {len(lines)}"))
        for line in lines:
            print(f"- {line}" if md else f"  {line}")


if __name__ == "__main__":
    sys.exit(main())
