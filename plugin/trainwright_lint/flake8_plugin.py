"""flake8 front end: ``TrainwrightChecker``, registered as the ``TW`` entry point.

flake8 parses every file with ``ast`` before calling tree plugins and hands us that tree, so the
plugin costs one substring test for the ~99% of files that cannot define a Trainer subclass or a
callback, and an ``ast`` walk for the rest. Cross-file bases are resolved by reading sibling modules
of the file's package on demand (cached per process); a class whose file never mentions "Trainer"
or "Callback" (or a configured base name) is only seen by ``trainwright lint``, which indexes the
whole project first. Mixins are recognised when the class combining them with a Trainer base is in
the same file. ``[tool.trainwright]`` is not read here: use the ``--tw-*`` options (or their
``tw-...`` keys in the flake8 config).

Never crashes flake8: any internal error yields no findings for that file.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from trainwright_lint import __version__, prefilter
from trainwright_lint.config import LintConfig


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

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        source = "".join(self.lines)
        if not prefilter.might_define_target(source, prefilter.gate_words(self.trainer_bases)):
            return
        try:
            findings = self._lint()
        except Exception as exc:  # noqa: BLE001 - a linter bug must not abort the user's flake8 run
            print(f"trainwright: internal error on {self.filename}: {exc!r} (file skipped)", file=sys.stderr)
            return
        for f in findings:
            # flake8 adds 1 to the column we yield.
            yield f.line, f.column - 1, f"{f.code} {f.message}", type(self)

    def _lint(self) -> list[Any]:
        from trainwright_lint.engine import lint_tree

        config = LintConfig(
            transformers_version=self.transformers_version,
            trainer_bases=self.trainer_bases,
            trl_version=self.trl_version,
        )
        return lint_tree(self.tree, [line.rstrip("\r\n") for line in self.lines], self.filename, config)
