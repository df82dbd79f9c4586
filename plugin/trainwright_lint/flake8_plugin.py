"""flake8 front end: ``TrainwrightChecker``, registered as the ``TW`` entry point.

flake8 parses every file with ``ast`` before calling tree plugins and hands us that tree, so the
plugin costs one substring test for the ~99% of files that cannot define a Trainer subclass or a
callback, and an ``ast`` walk for the rest. Cross-file bases are resolved by reading sibling modules
of the file's package on demand (parsed once per process). Each file is linted against a project model
of its own: itself and the modules it needs, exactly as when flake8 is given that file alone, so its
findings never depend on which files the same process linted before (``-j 1`` and ``-j 2`` agree). A
model shared by all the files of a process made a mixin file's private overrides findings only when a
file combining the mixin with a Trainer happened to be linted first in the same process. A class whose
file never mentions "Trainer"
or "Callback" (or a configured base name) is only seen by ``trainwright lint``, which indexes the
whole project first. Mixins are recognised when the class combining them with a Trainer base is in
the same file. ``[tool.trainwright]`` is not read here: use the ``--tw-*`` options (or their
``tw-...`` keys in the flake8 config).

Never crashes flake8: any internal error yields no findings for that file. The one exception is a
target that no catalogued release can stand for: the whole run fails with one message
(:class:`UnusableTarget`), as ``trainwright lint`` exits 2, since linting nothing must not pass.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from flake8.exceptions import ExecutionError

from trainwright_lint import __version__, prefilter
from trainwright_lint.configuration import (
    LintConfig,
    TargetError,
    resolve_targets,
    targets_for_file,
    with_targets,
)
from trainwright_lint.terminal import printable


class UnusableTarget(ExecutionError):  # type: ignore[misc]  # flake8 ships no type information
    """No catalogued release can stand for the project's target (``tw-transformers-version = 9.9.9``).

    Raised out of the checker, not reported on a file: flake8 prints "There was a critical error during
    execution of Flake8:" and this message once, and exits 1, in one process as with ``-j 2`` (the pool
    re-raises it in the parent). Skipping the files instead left CI green with nothing linted."""

    def __str__(self) -> str:  # ``args`` hold the reason alone, so the error pickles back as itself
        return f"trainwright: {self.args[0]}; no file was linted"


class TrainwrightChecker:
    name = "trainwright"
    version = __version__

    transformers_version: ClassVar[str | None] = None
    trl_version: ClassVar[str | None] = None
    trainer_bases: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tree: ast.Module, lines: Sequence[str], filename: str) -> None:
        self.tree = tree  # the parameter name ``tree`` is what makes flake8 treat us as an AST plugin
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--tw-transformers-version",
            default=None,
            parse_from_config=True,
            help="trainwright: target transformers release (default: installed, else newest catalogued)",
        )
        option_manager.add_option(
            "--tw-trl-version",
            default=None,
            parse_from_config=True,
            help="trainwright: target TRL release for TRL trainer subclasses (default: installed, else newest)",
        )
        option_manager.add_option(
            "--tw-trainer-bases",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="trainwright: extra classes to treat as Trainer subclasses (comma-separated)",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.transformers_version = getattr(options, "tw_transformers_version", None) or None
        cls.trl_version = getattr(options, "tw_trl_version", None) or None
        bases = getattr(options, "tw_trainer_bases", ()) or ()
        if isinstance(bases, str):
            bases = [b.strip() for b in bases.split(",")]
        cls.trainer_bases = tuple(b for b in bases if b)
        cls._check_options()

    @classmethod
    def _check_options(cls) -> None:
        """A ``--tw-*-version`` no catalogued release can stand for fails the run here, in flake8's main
        process, before any file is read or any worker starts: such a target is wrong for every project
        root, so it need not wait for a Trainer file, and the error does not travel back through the pool
        (under heavy load a ``-j 2`` run once outlived a 120 s limit on that path). The catalogue loaded
        here is inherited by forked workers. Targets that depend on the project (``[tool.trainwright]``,
        requirements) are still resolved per file, where a project with no Trainer code never pays for
        them."""
        if cls.transformers_version is None and cls.trl_version is None:
            return
        try:
            resolve_targets(
                None,
                transformers_option=cls.transformers_version,
                trl_option=cls.trl_version,
                option_prefix="--tw-",
            )
        except TargetError as exc:
            raise UnusableTarget(str(exc)) from None

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        source = "".join(self.lines)
        if not prefilter.worth_linting(source, prefilter.gate_words(self.trainer_bases)):
            return
        try:
            findings = self._lint()
        except UnusableTarget:
            raise  # the run must fail, not pass with nothing linted
        except Exception as exc:  # noqa: BLE001 - a linter bug must not abort the user's flake8 run
            print(f"trainwright: internal error on {self.filename}: {exc!r} (file skipped)", file=sys.stderr)
            return
        for f in findings:
            # flake8 adds 1 to the column we yield.
            yield f.line, f.column - 1, f"{f.code} {f.message}", type(self)

    def _lint(self) -> list[Any]:
        from trainwright_lint.engine import lint_tree

        config = self._config()
        source = "".join(self.lines)
        collecting = gc.isenabled()
        gc.disable()  # the facts built here hold no cycles: collections during the lint find nothing
        try:
            findings = lint_tree(self.tree, source, self.filename, config, workspace=self._workspace(config))
        finally:
            if collecting:
                gc.enable()
        # The workspace keeps every linted file's tree for the files after it (bases, callers): millions
        # of long-lived objects without cycles, which each of flake8's garbage collections would walk
        # again. Moving what exists now to the permanent generation took the plugin's share of a flake8
        # run on TRL from 1.2 s of collections to 0.2 s (flake8 alone: 0.5 s).
        gc.freeze()
        return findings

    _parsed: ClassVar[dict[tuple[str, tuple[str, ...]], Any]] = {}

    def _workspace(self, config: LintConfig) -> Any:
        """A fresh workspace (model and class facts) for this file, over the files parsed so far by
        this process for its project root: a base class's file is parsed once however many subclass
        files flake8 hands this process, and what other files made of it is not seen here."""
        from trainwright_lint.engine import project_root_for, single_file_workspace

        key = (project_root_for(self.filename), config.trainer_bases)
        workspace = single_file_workspace(self.filename, config)
        workspace.parsed = self._parsed.setdefault(key, {})
        return workspace

    _reported: ClassVar[set[str]] = set()

    def _config(self) -> LintConfig:
        """The targets resolved as ``trainwright lint`` resolves them (``configuration``: one
        resolution), from this file's project root, ``--tw-*`` options first; warnings printed once per
        process. A target no catalogued release can stand for stops the run: :class:`UnusableTarget`."""
        try:
            targets = targets_for_file(self.filename, self.transformers_version, self.trl_version)
        except TargetError as exc:
            raise UnusableTarget(str(exc)) from None
        for warning in targets.warnings:
            self._report_once(f"trainwright: warning: {warning}")
        return with_targets(LintConfig(trainer_bases=self.trainer_bases), targets)

    @classmethod
    def _report_once(cls, text: str) -> None:
        if text not in cls._reported:
            cls._reported.add(text)
            if _first_in_run(text):
                print(printable(text, sys.stderr), file=sys.stderr)


def _first_in_run(text: str) -> bool:
    """Whether no other process of this flake8 run printed ``text`` yet.

    Why: with ``-j`` each worker is a process of its own, so a warning kept once per process was printed once
    per worker. A worker's run is its parent, flake8's main process (pid and start time, so a reused pid is
    another run); the first worker to create the run's marker file for the text prints it. Resolving the
    targets in the main process before the workers start would print warnings for projects with no Trainer
    code at all, and cost every flake8 run the catalogue's start-up. Any failure to mark prints."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None:
        return True
    folder = os.path.join(tempfile.gettempdir(), f"trainwright-flake8-{getattr(os, 'getuid', lambda: 0)()}")
    digest = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16]
    marker = os.path.join(folder, f"{parent.pid}-{_started(parent.pid)}-{digest}")
    try:
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    except OSError:
        return True
    _prune(folder)
    return True


def _started(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux ``/proc``), ``""`` where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return ""


def _prune(folder: str, keep_s: float = 86400.0) -> None:
    """Remove markers older than a day (a run lasts minutes), so the folder does not grow for ever."""
    now = time.time()
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if now - entry.stat().st_mtime > keep_s:
                    os.unlink(entry.path)
    except OSError:
        return
