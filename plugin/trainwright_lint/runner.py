"""Project-wide linting for the CLI: discover files, build the cross-file class index, lint in
parallel.

Pass 1 (cheap): read every file, keep those that pass the textual pre-filter, parse them with
``ast`` and summarise imports and classes. Files that mention the name of a Trainer subclass found
so far (``class Child(MyBase)`` in a file that never says "Trainer") are pulled in until nothing
new appears. Pass 2: lint every file that defines a Trainer subclass, a mixin of one or a callback,
against the shared index. Both passes fan out over processes when there is more than one core and
enough work.
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from trainwright_lint import noqa, prefilter
from trainwright_lint.config import LintConfig
from trainwright_lint.engine import enabled_rules, lint_tree
from trainwright_lint.finding import NOT_LINTED, Finding, not_linted
from trainwright_lint.resolve import ModuleSummary, ProjectIndex, module_name_for, project_loader, summarise
from trainwright_lint.timelimit import FileTimeout, time_limit

Progress = Callable[[int, int], None]  # (files done, files in total)

PARALLEL_MIN_FILES = 24


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # files that could not be read or parsed
    files_seen: int = 0
    files_parsed: int = 0
    files_linted: int = 0


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _parse_error(path: str, exc: BaseException) -> Finding:
    if isinstance(exc, SyntaxError):
        return not_linted(path, f"cannot parse ({exc.__class__.__name__}: {exc.msg})", exc.lineno, exc.offset)
    return not_linted(path, f"cannot parse ({exc.__class__.__name__}: {exc})")


def _too_slow(path: str, exc: BaseException) -> Finding:
    return not_linted(path, f"skipped: {exc} (the per-file time limit; raise file-timeout to lint it)")


_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def _summarise_one(
    path: str, timeout: float | None = None
) -> tuple[str, ModuleSummary | None, Finding | None]:
    text = _read(path)
    if text is None:
        return path, None, not_linted(path, "cannot read file")
    try:
        with time_limit(timeout), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
            tree = ast.parse(text, filename=path)
            module, is_package, _ = module_name_for(path)
            return path, summarise(tree, module, path, is_package), None
    except FileTimeout as exc:
        return path, None, _too_slow(path, exc)
    except _PARSE_ERRORS as exc:
        return path, None, _parse_error(path, exc)


_WORKER_INDEX: ProjectIndex | None = None
_WORKER_CONFIG: LintConfig | None = None


def _init_worker(index: ProjectIndex, config: LintConfig) -> None:
    global _WORKER_INDEX, _WORKER_CONFIG
    _WORKER_INDEX, _WORKER_CONFIG = index, config


def _lint_one(path: str) -> tuple[list[Finding], str | None]:
    assert _WORKER_INDEX is not None and _WORKER_CONFIG is not None
    return lint_file(path, _WORKER_CONFIG, _WORKER_INDEX)


def lint_file(path: str, config: LintConfig, index: ProjectIndex) -> tuple[list[Finding], str | None]:
    """Findings of one file; a file that cannot be read, parsed or linted in time gives one TW000."""
    text = _read(path)
    if text is None:
        return [not_linted(path, "cannot read file")], None
    lines = text.splitlines()
    if noqa.file_is_skipped(lines):
        return [], None
    rules = enabled_rules(config, path)
    if not rules:
        return [], None
    try:
        with time_limit(config.file_timeout):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(text, filename=path)
            except _PARSE_ERRORS as exc:
                return [_parse_error(path, exc)], None
            module = module_name_for(path)[0]
            summary = index.modules.get(module)
            if summary is None or summary.path != path:
                summary = None
            findings = lint_tree(tree, lines, path, config, index=index, summary=summary, rules=rules)
    except FileTimeout as exc:
        return [_too_slow(path, exc)], None
    except RecursionError:
        return [not_linted(path, "skipped: nested too deeply for the rules (RecursionError)")], None
    for f in findings:  # drop the AST nodes: results cross process boundaries
        object.__setattr__(f, "node", None)
    return noqa.filter_noqa(findings, lines), None


def _map(func, items: Sequence[str], jobs: int, initializer=None, initargs=()):  # type: ignore[no-untyped-def]
    if jobs > 1 and len(items) >= PARALLEL_MIN_FILES:
        chunk = max(1, len(items) // (jobs * 4))
        with ProcessPoolExecutor(max_workers=jobs, initializer=initializer, initargs=initargs) as pool:
            return list(pool.map(func, items, chunksize=chunk))
    if initializer is not None:
        initializer(*initargs)
    return [func(item) for item in items]


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
) -> LintResult:
    """Lint ``files`` (already discovered) as one project.

    ``explicit``: files named on the command line (pre-commit passes only changed files). Those are
    parsed even when their text never names a Trainer, so ``class Child(MyBase)`` is checked against
    bases read on demand from the rest of the project.
    """
    jobs = default_jobs() if jobs is None else max(1, jobs)
    result = LintResult(files_seen=len(files))
    words = prefilter.gate_words(config.trainer_bases)
    texts: dict[str, str] = {}
    candidates: list[str] = []
    report_tw000 = config.code_enabled(NOT_LINTED)  # select/ignore apply, as for flake8's E999
    for done, path in enumerate(files, 1):
        if progress is not None and (done % 50 == 0 or done == len(files)):
            progress(done, len(files))
        text = _read(path)
        if text is None:
            if report_tw000:
                result.findings.append(not_linted(path, "cannot read file"))
            continue
        if not prefilter.has_class_with_bases(text):
            continue
        if prefilter.mentions(text, words):
            candidates.append(path)
        else:
            texts[path] = text  # may still subclass a project Trainer defined elsewhere

    files_by_module: dict[str, str] = {}
    roots: dict[str, str] = {}  # top-level package -> directory it is imported from
    for path in files:
        module, _, root = module_name_for(path)
        files_by_module.setdefault(module, path)
        roots.setdefault(module.split(".", 1)[0], root)
    index = ProjectIndex(loader=project_loader(files_by_module, roots), extra_bases=config.trainer_bases)

    summaries: dict[str, ModuleSummary] = {}
    known_names: set[str] = set()
    pending = candidates
    explicit_left = [p for p in explicit if p in texts]
    while True:
        if not pending:
            if not explicit_left:
                break
            pending, explicit_left = explicit_left, []
            for p in pending:
                texts.pop(p, None)
        for path, summary, error in _map(partial(_summarise_one, timeout=config.file_timeout), pending, jobs):
            result.files_parsed += 1
            if error is not None:
                if report_tw000:
                    result.findings.append(error)
            elif summary is not None:
                summaries[path] = summary
                index.add(summary)
        # Names of project classes that are Trainer subclasses / callbacks / mixins so far: files that
        # mention one of them may subclass it.
        names = {name for summary in summaries.values() for name in index.target_classes(summary)}
        # Files naming a class that contains a gate word already passed the gate: search only the rest.
        new = {n for n in names - known_names if not prefilter.mentions(n, words)}
        known_names |= names
        pattern = prefilter.names_pattern(new)
        pending = [p for p, t in texts.items() if pattern is not None and pattern.search(t)]
        for p in pending:
            del texts[p]

    for summary in list(index.modules.values()):  # modules loaded on demand (mixins, bases)
        summaries.setdefault(summary.path, summary)
    targets = sorted(path for path, summary in summaries.items() if index.target_classes(summary))
    result.files_linted = len(targets)
    index.loader = None  # workers get a self-contained index
    for findings, error in _map(_lint_one, targets, jobs, _init_worker, (index, config)):
        result.findings.extend(f for f in findings if f.code != NOT_LINTED or report_tw000)
        if error:
            result.errors.append(error)
    result.findings.sort(key=Finding.sort_key)
    return result
