"""Project-wide linting for the CLI: read, parse once, build the project model, lint.

1. Every discovered file is read; the textual gate (``prefilter``) keeps those that may define a
   Trainer subclass or a callback.
2. Workers parse the kept files and summarise them, keeping the trees. Files that mention the name
   of a target class found so far (``class Child(MyBase)`` in a file that never says "Trainer") are
   parsed too, until nothing new appears.
3. The parent builds the project model from the summaries (reading, on demand, files outside the
   discovered set that hold a base class — pre-commit passes only the changed files) and decides
   which files have classes the rules look at.
4. The workers that hold those files' trees run the rules on them.

Findings are reported only for the files that were given, with paths relative to the project root.
With ``file_timeout`` the parent kills a worker that runs past it on one file, reports that file as
``TW000`` and carries on (``workers.Pool``); with ``file_timeout=0`` and one job everything runs in
this process.
"""

from __future__ import annotations

import functools
import gc
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from trainwright_lint import noqa, prefilter, supervisor
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.analysis.workspace import Workspace, parse_source
from trainwright_lint.configuration import LintConfig, known_codes
from trainwright_lint.discovery import real_paths
from trainwright_lint.engine import enabled_rules, lint_unit, target_releases, text_needs
from trainwright_lint.finding import NOT_LINTED, Finding, not_linted
from trainwright_lint.project.model import ProjectModel, split_key
from trainwright_lint.project.summary import ModuleSummary, instance_stores, summarise
from trainwright_lint.sourcefile import fix_blocker, read_source, text_digest, unreadable_reason
from trainwright_lint.supervisor import Beat

if TYPE_CHECKING:
    from trainwright_lint.workers import Pool

Progress = Callable[[int, int], None]  # (files done, files in total)
FollowUp = Callable[["LintResult", "Beat | None", Mapping[str, str]], Any]  # see ``lint_files``

PARALLEL_MIN_FILES = 24
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclass
class ClassRecord:
    """A class the rules looked at (or could not resolve), for ``--statistics``."""

    path: str
    line: int
    name: str
    role: str


@dataclass
class LintResult:
    """What a project-wide lint returns to the commands: the findings, the counts the summary line
    prints, and (in-process) the parsed files for a fix pass to reuse."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # warnings for the user (stderr)
    files_seen: int = 0
    files_parsed: int = 0
    files_linted: int = 0
    classes: list[ClassRecord] = field(default_factory=list)  # what the rules looked at
    unresolved: list[ClassRecord] = field(default_factory=list)  # role "?": name = class, reason in role
    rule_seconds: dict[str, float] = field(default_factory=dict)
    model: ProjectModel | None = None
    workspace: Workspace | None = None  # in-process runs: the parsed files, for a fix pass to reuse
    named: dict[str, str] = field(default_factory=dict)  # real path -> the path given, where they differ
    #: path -> ``text_digest`` of the text its findings were computed from (a fix trusts them only there)
    linted: dict[str, bytes] = field(default_factory=dict)
    followup: Any = None  # what ``lint_files``'s ``then`` returned


# ----------------------------------------------------------------------------------------------------
# What a worker does (also run in-process)


@dataclass
class _State:
    """What one process keeps between tasks: the settings and the files it has parsed."""

    config: LintConfig
    workspace: Workspace
    words: tuple[str, ...]
    #: in-process runs: the texts the triage read, taken by the parse instead of reading each file again
    texts: dict[str, str] = field(default_factory=dict)


_STATE: _State | None = None


def _new_state(config: LintConfig) -> _State:
    words = prefilter.gate_words(config.trainer_bases)
    model = ProjectModel(
        str(config.root), extra_bases=config.trainer_bases, trl_release=target_releases(config).trl[-1]
    )
    return _State(config, Workspace(model, words, tracked=text_needs(config).tracked), words)


def _handle(message: tuple[Any, ...]) -> Any:
    global _STATE
    kind = message[0]
    if kind == "setup":
        _STATE = _new_state(message[1])
        gc.disable()  # see lint_files; a worker process is ours alone
        return None
    assert _STATE is not None
    if kind == "parse":
        return _parse(_STATE, message[1])
    if kind == "summarise":
        return _parse(_STATE, message[1], keep=False)
    if kind == "model":
        summaries, loose = message[1], message[2]
        _STATE.workspace.model.add_all(summaries, keep_existing=True)
        _STATE.workspace.model.loose_instance_stores = loose
        return None
    if kind == "lint":
        return _lint(_STATE, message[1])
    raise ValueError(f"unknown task {kind!r}")


def _forget_state() -> None:
    global _STATE
    _STATE = None


def _parse(state: _State, path: str, keep: bool = True) -> tuple[ModuleSummary | None, Finding | None]:
    """The file's summary (or why there is none); with ``keep`` its tree stays in the workspace for
    the lint. Without (files parsed only for their classes' bases, as every file pre-commit names
    is), the tree is dropped: the few of them that turn out to need linting are read again, and
    6,000 named files no longer hold 6,000 trees at once."""
    source = state.texts.pop(path, None)
    if source is None:
        source = read_source(path)
    if source is None:
        return None, not_linted(path, unreadable_reason(path))
    try:
        tree = parse_source(source, path)
    except SyntaxError as exc:
        reason = f"cannot parse ({exc.__class__.__name__}: {exc.msg}){_newer_syntax(exc)}"
        return None, not_linted(path, reason, exc.lineno, exc.offset)
    except _PARSE_ERRORS as exc:
        return None, not_linted(path, f"cannot parse ({exc.__class__.__name__}: {exc})")
    summary = summarise(tree, path, source, state.words, state.workspace.tracked)
    if keep:
        state.workspace.add(FileUnit(path, source, tree, summary))
    return summary, None


_GENERIC_CLASS = re.compile(r"^\s*class\s+\w+\s*\[")


def _newer_syntax(exc: SyntaxError) -> str:
    """A hint when the line that failed is syntax of a newer Python than this one: a generic class
    (``class T[X](Trainer):``, PEP 695) is Python 3.12+, and this interpreter's ``ast`` rejects it."""
    if sys.version_info < (3, 12) and _GENERIC_CLASS.match(exc.text or ""):
        return "; class type parameters (PEP 695) need Python 3.12 or later: run trainwright on it to lint this file"
    return ""


def _lint(state: _State, path: str) -> tuple[list[Finding], dict[str, float], bytes]:
    """The file's findings, the rules' timings, and the digest of the text they were computed from."""
    unit = state.workspace.unit(path)
    if unit is None:
        return [not_linted(path, "cannot read or parse file")], {}, b""
    lines = unit.lines
    if noqa.file_is_skipped(lines, unit.source):
        return [], {}, b""
    rules = enabled_rules(state.config, path)
    timings: dict[str, float] = {}
    try:
        findings = lint_unit(unit, state.workspace, target_releases(state.config), rules, timings)
    except RecursionError:
        return [not_linted(path, "skipped: nested too deeply for the rules (RecursionError)")], timings, b""
    kept = withhold_fixes(noqa_applied(findings, unit.source, lines, path, state.config), unit.source)
    # The digest tells the fixer that its text is the one these findings' edits address; a file without
    # an edit is never fixed, so it costs nothing there (``driver`` skips a file with no fixable finding).
    digest = text_digest(unit.source) if any(f.fix is not None for f in kept) else b""
    return kept, timings, digest


def noqa_applied(
    findings: Sequence[Finding], source: str, lines: Sequence[str], path: str, config: LintConfig
) -> list[Finding]:
    """``findings`` less those a ``# noqa`` silences, plus a TW001 for each ``TW`` code of a ``# noqa``
    that silences nothing or names no code (``noqa.unused_directives``; when TW001 is enabled)."""
    kept = noqa.filter_noqa(findings, lines)
    if noqa.may_list_codes(source) and config.code_enabled(noqa.UNUSED_NOQA, path):
        enabled = functools.partial(config.code_enabled, path=path)
        unused = noqa.unused_directives(findings, source, path, known_codes(), enabled)
        kept += noqa.filter_noqa(unused, lines)
    return kept


def withhold_fixes(findings: list[Finding], source: str) -> list[Finding]:
    """``findings`` without their fixes when the fixer could not apply them to ``source``
    (``sourcefile.fix_blocker``): lint must never mark ``[*]`` a fix that ``fix`` then refuses."""
    if not any(f.fix is not None for f in findings):
        return findings  # nothing to withhold: the text is not scanned
    blocker = fix_blocker(source)
    if blocker is None:
        return findings
    return [replace(f, fix=None, fix_note=blocker) if f.fix is not None else f for f in findings]


# ----------------------------------------------------------------------------------------------------
# The parent


def _parallel(jobs: int, n_files: int) -> bool:
    return jobs > 1 and n_files >= PARALLEL_MIN_FILES


def timeout_problem(timeout: float) -> str:
    """Why a file was skipped by the per-file time limit (lint and fix say it alike)."""
    return f"skipped: took longer than {timeout:g}s (file-timeout)"


class _Runner:
    """Runs tasks in worker processes (with the per-file time limit) or in this process.

    In this process, ``beat`` (from ``supervisor.run``) announces each task to the parent that holds
    the time limit, and the tasks in ``skipped`` (killed or crashed in an earlier child) are reported
    instead of run."""

    def __init__(
        self,
        config: LintConfig,
        jobs: int,
        n_files: int,
        beat: Beat | None = None,
        skipped: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.timeout = config.file_timeout
        self.beat = beat
        self.skipped = skipped or {}
        parallel = _parallel(jobs, n_files)
        self.pool: Pool | None = None
        if parallel or (self.timeout > 0 and beat is None):
            # Imported only here: multiprocessing costs a tenth of a one-job run's start-up.
            from trainwright_lint.workers import Pool

            self.pool = Pool(jobs if parallel else 1, _handle, self.timeout)
            self.pool.broadcast(("setup", config))
        else:
            _handle(("setup", config))
        self.owner: dict[str, int] = {}
        self.model_message: tuple[Any, ...] | None = None

    def _restart(self, index: int) -> None:
        """A fresh worker replacing a killed one: the same set-up, and the model if it was sent."""
        assert self.pool is not None
        conn = self.pool.workers[index].conn
        for message in (("setup", self.config), self.model_message):
            if message is not None:
                conn.send(message)
                conn.recv()
        for path, owner in list(self.owner.items()):
            if owner == index:
                del self.owner[path]  # its trees are gone: any worker may re-read the file

    def run(self, kind: str, paths: Sequence[str]) -> list[tuple[str, Any, str]]:
        """(path, value, problem) per path; problem is "" or why there is no value."""
        if self.pool is None:
            out = []
            for p in paths:
                key = f"{kind}:{p}"
                if key in self.skipped:
                    out.append((p, None, self.skipped[key]))
                    continue
                if self.beat is not None:
                    self.beat(key)
                try:
                    out.append((p, _handle((kind, p)), ""))
                except Exception as exc:  # noqa: BLE001 - reported on the file
                    out.append((p, None, f"internal error ({exc.__class__.__name__}: {exc})"))
            if self.beat is not None:
                self.beat(None)  # the parent's steps between the passes have no time limit
            return out
        results = self.pool.run(
            [(kind, p) for p in paths],
            affinity=lambda task: self.owner.get(task[1]),
            on_replace=self._restart,
        )
        out = []
        for r in results:
            path = r.task[1]
            if kind == "parse" and not r.timed_out and not r.crashed:
                self.owner[path] = r.worker
            if r.timed_out:
                out.append((path, None, timeout_problem(self.timeout)))
            elif r.crashed:
                out.append((path, None, f"internal error ({r.crashed})"))
            else:
                out.append((path, r.value, ""))
        return out

    def share_model(self, model: ProjectModel) -> None:
        """Give every worker the summaries it did not build itself (pickling costs as much as
        summarising: each worker gets only what it lacks)."""
        summaries = list(model.summaries.values())
        loose = model.loose_instance_stores
        self.model_message = ("model", summaries, loose)
        if self.pool is None:
            return  # in-process: the parent's workspace is the worker's
        for index, worker in enumerate(self.pool.workers):
            missing = [s for s in summaries if self.owner.get(s.path) != index]
            worker.conn.send(("model", missing, loose))
        for worker in self.pool.workers:
            worker.conn.recv()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS/Windows
        return max(1, os.cpu_count() or 1)


def lint_files(
    files: Sequence[str],
    config: LintConfig,
    jobs: int | None = None,
    explicit: Sequence[str] = (),
    progress: Progress | None = None,
    keep_model: bool = False,
    then: FollowUp | None = None,
) -> LintResult:
    """Lint ``files`` (already discovered) as one project.

    ``explicit``: files named on the command line (pre-commit passes only changed files). Those are
    parsed even when their text never names a Trainer, so ``class Child(MyBase)`` is checked against
    bases read on demand from the rest of the project.

    With one job and a ``file_timeout``, one forked child runs everything in-process while this
    process holds the time limit (``supervisor``); ``keep_model`` asks it to send the project model
    back too (a fix pass re-lints against it). Several jobs use the worker pool.

    ``then(result, beat, skipped)`` is a follow-up pass (a fix) that runs where the parsed trees are,
    with the same per-file time limit: in the forked child, handed its ``beat`` and ``skipped``;
    otherwise here, after the lint, with ``beat`` None (it then keeps its own limit). Its value is
    ``result.followup``.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    shown: dict[str, str] = {}  # real path -> the path as given
    for real, f in zip(real_paths(files), files):
        shown.setdefault(real, f)
    if config.file_timeout > 0 and not _parallel(jobs, len(shown)) and supervisor.available():

        def in_child(beat: Beat, skipped: Mapping[str, str]) -> LintResult:
            with _collection_paused():
                result = _lint_files(shown, config, 1, explicit, progress, beat, skipped)
            if then is not None:
                result.followup = then(result, beat, skipped)
            result.workspace = None  # the trees stay in the child
            if keep_model and result.model is not None:
                result.model.loader = None  # a bound method of the child's workspace
            else:
                result.model = None
            return result

        return supervisor.run(in_child, config.file_timeout, timeout_problem)  # type: ignore[no-any-return]
    with _collection_paused():
        result = _lint_files(shown, config, jobs, explicit, progress, None, None)
    if then is not None:
        result.followup = then(result, None, {})
    return result


@contextmanager
def _collection_paused() -> Iterator[None]:
    """The kept trees are millions of objects without cycles: every collection would traverse them
    all for nothing (a third of the run's CPU on TRL's source). Collection resumes afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class _Triage:
    """What reading every given file decided, before anything is parsed: the files to parse now
    (``candidates``), the rest with their text (``others``: parsed once their text names a target class
    found so far), and the attribute stores a rule tracks (``loose``)."""

    candidates: list[str] = field(default_factory=list)
    others: dict[str, str] = field(default_factory=dict)
    loose: dict[str, tuple[tuple[str, str, str], ...]] = field(default_factory=dict)


@dataclass
class _Pass:
    """One project-wide lint in progress: its settings, its runner, and the result it fills."""

    config: LintConfig
    runner: _Runner
    result: LintResult
    words: tuple[str, ...]
    report_tw000: bool  # select/ignore apply to TW000, as for flake8's E999

    def not_linted(self, finding: Finding) -> None:
        if self.report_tw000:
            self.result.findings.append(finding)

    def keep_text(self, path: str, text: str) -> None:
        """In this process, the parse of ``path`` takes ``text`` instead of reading the file again (a
        worker process reads its files itself)."""
        if self.runner.pool is None and _STATE is not None:
            _STATE.texts[path] = text


def _lint_files(
    shown: dict[str, str],
    config: LintConfig,
    jobs: int,
    explicit: Sequence[str],
    progress: Progress | None,
    beat: Beat | None,
    skipped: Mapping[str, str] | None,
) -> LintResult:
    """``shown``: each file's real path -> the path as given. Read and triage every file, parse what
    may hold a target class (following the names of the classes found), build the project model, lint."""
    result = LintResult()
    result.files_seen = len(shown)
    result.named = {real: given for real, given in shown.items() if real != given}  # links, relative names
    # The workers start before this process reads anything: a fork copies the pages it later writes,
    # and every file's text read here would be such a page (0.2 s of a 1 s run on TRL's source).
    runner = _Runner(config, jobs, len(shown), beat, skipped)
    run = _Pass(
        config, runner, result, prefilter.gate_words(config.trainer_bases), config.code_enabled(NOT_LINTED)
    )
    try:
        triage = _triage(run, shown, progress)
        parent = _STATE if runner.pool is None else _new_state(config)
        assert parent is not None
        model = parent.workspace.model
        model.loose_instance_stores = {p: s for p, s in triage.loose.items() if s}
        summaries, bases_only = _parse_all(run, model, triage, {os.path.realpath(p) for p in explicit})
        _lint_targets(run, model, shown, summaries, bases_only)
        result.model = model
        if runner.pool is None:
            result.workspace = parent.workspace
    finally:
        runner.close()
        if runner.pool is None:
            _forget_state()  # the caller owns the trees now (through ``result``), not this module
    result.findings.sort(key=Finding.sort_key)
    return result


def _triage(run: _Pass, shown: dict[str, str], progress: Progress | None) -> _Triage:
    """Read every file once and decide, from its text alone, whether it is parsed now, later (if it
    names a target class found meanwhile) or never."""
    out = _Triage()
    needs = text_needs(run.config)
    for done, path in enumerate(shown, 1):
        if progress is not None and (done % 50 == 0 or done == len(shown)):
            progress(done, len(shown))
        text = read_source(path)
        if text is None:
            run.not_linted(not_linted(path, unreadable_reason(path)))
            continue
        if needs.tracks(text):
            out.loose[path] = instance_stores(text, needs.tracked)
        constructs = needs.is_script(text)
        if not prefilter.has_class_with_bases(text):
            if constructs:
                out.candidates.append(path)  # a script that builds a Trainer / TrainingArguments (TW304)
                run.keep_text(path, text)
            continue
        if constructs or prefilter.mentions(text, run.words):
            out.candidates.append(path)
            run.keep_text(path, text)
        else:
            out.others[path] = text
    return out


def _parse_all(
    run: _Pass, model: ProjectModel, triage: _Triage, explicit: set[str]
) -> tuple[dict[str, ModuleSummary], set[str]]:
    """Parse the candidates, then the files that name a target class found so far, until none is new;
    then the named files not parsed yet, only for their classes' bases (``summarise``: their trees are
    not kept), and again what names the classes those bring. Returns every summary, and the named
    files parsed only for their bases."""
    rounds = _ParseRounds(run, model, triage.others)
    explicit_left = [p for p in triage.others if p in explicit]
    rounds.follow(triage.candidates, "parse")
    if explicit_left:
        for p in explicit_left:
            text = triage.others.pop(p, None)
            if text is not None:
                run.keep_text(p, text)
        rounds.bases_only.update(explicit_left)
        rounds.follow(explicit_left, "summarise")
    return rounds.summaries, rounds.bases_only


class _ParseRounds:
    """Parse rounds that follow class names: each round's new target classes pull in the files (among
    ``others``) whose text names them."""

    def __init__(self, run: _Pass, model: ProjectModel, others: dict[str, str]) -> None:
        self.run = run
        self.model = model
        self.others = others
        self.summaries: dict[str, ModuleSummary] = {}
        self.bases_only: set[str] = set()  # named files parsed only for their classes' bases
        self.known: set[str] = set()

    def follow(self, pending: list[str], kind: str) -> None:
        """Parse ``pending`` (as ``kind``), then the files naming new target classes, until none."""
        while pending:
            self._parse(pending, kind)
            pending = self._naming_new_classes()
            kind = "parse"  # files that name a target class found so far: likely linted

    def _parse(self, paths: list[str], kind: str) -> None:
        parsed: list[ModuleSummary] = []
        for path, value, problem in self.run.runner.run(kind, paths):
            self.run.result.files_parsed += 1
            summary, error = value if value is not None else (None, not_linted(path, problem))
            if error is not None:
                self.run.not_linted(error)
            elif summary is not None:
                self.summaries[path] = summary
                parsed.append(summary)
        self.model.add_all(parsed)

    def _naming_new_classes(self) -> list[str]:
        model, words = self.model, self.run.words
        names = {split_key(k)[1].rsplit(".", 1)[-1] for p in self.summaries for k in model.target_classes(p)}  # type: ignore[index]
        new = {n for n in names - self.known if not prefilter.mentions(n, words)}
        self.known |= names
        pattern = prefilter.names_pattern(new)
        pending = [p for p, t in self.others.items() if pattern is not None and pattern.search(t)]
        for p in pending:
            self.run.keep_text(p, self.others.pop(p))
        return pending


def _lint_targets(
    run: _Pass,
    model: ProjectModel,
    shown: dict[str, str],
    summaries: dict[str, ModuleSummary],
    bases_only: set[str],
) -> None:
    """Lint the given files that hold a target class (or were parsed as candidates), in the workers
    that hold their trees, and add their findings and rule timings to the result."""
    result = run.result
    # Files read on demand while resolving bases (a mixin's file that never says "Trainer") count
    # too when they were given.
    known_paths = [p for p in shown if p in model.summaries]
    targets = sorted(
        p for p in known_paths if model.target_classes(p) or (p in summaries and p not in bases_only)
    )
    result.files_linted = len(targets)
    _record_classes(result, model, known_paths)
    run.runner.share_model(model)
    for path, value, problem in run.runner.run("lint", targets):
        if value is None:
            run.not_linted(not_linted(path, problem))
            continue
        findings, timings, result.linted[path] = value
        result.findings += [f for f in findings if f.code != NOT_LINTED or run.report_tw000]
        for code, seconds in timings.items():
            result.rule_seconds[code] = result.rule_seconds.get(code, 0.0) + seconds


def for_display(findings: Sequence[Finding], config: LintConfig) -> list[Finding]:
    """The findings with paths relative to the project root, as every output format shows them (the
    runner and the fixer work with real paths)."""
    shown: dict[str, str] = {}  # one realpath per file, not per finding
    for f in findings:
        if f.path not in shown:
            shown[f.path] = display_path(f.path, config)
    out = [replace(f, path=shown[f.path]) for f in findings]
    out.sort(key=Finding.sort_key)
    return out


def display_path(path: str, config: LintConfig) -> str:
    """A finding's path relative to the project root (as it is when outside the root)."""
    real = os.path.realpath(path)
    root = os.path.realpath(str(config.root))
    if real == root or real.startswith(root + os.sep):
        return os.path.relpath(real, root)
    return path


def _record_classes(result: LintResult, model: ProjectModel, paths: Sequence[str]) -> None:
    for path in paths:
        for key in model.target_classes(path):
            split = split_key(key)
            summary = model.summary(path)
            if split is None or summary is None:
                continue
            cls = summary.classes[split[1]]
            result.classes.append(ClassRecord(path, cls.line, split[1], model.role(key) or ""))
        for cls, reason in model.unresolved_lookalikes(path):
            result.unresolved.append(ClassRecord(path, cls.line, cls.qualname, reason))
