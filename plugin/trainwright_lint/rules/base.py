"""The rule interface: one rule = one class with a code, a name, a message template, a docstring that
is its documentation page, and VALID/INVALID examples the test-suite runs (Fixit's style).

A rule sees one class at a time through a ``ClassContext``: the ``ast.ClassDef``, what the class is
(Trainer subclass, mixin of one, or callback), the catalogue view of the target transformers release,
and what the project's own base classes define.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from trainwright_lint.finding import Finding
from trainwright_lint.resolve import CALLBACK, MIXIN, TRAINER

if TYPE_CHECKING:
    from trainwright.catalog import Catalog, MethodInfo, VersionView

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Example:
    """A code sample for a rule. ``version`` is the target transformers release (None: newest);
    ``line`` is the line an INVALID example must be reported on (None: any line)."""

    code: str
    version: str | None = None
    line: int | None = None


@dataclass
class ModuleContext:
    path: str
    tree: ast.Module
    lines: list[str]

    _called_attrs: set[str] | None = None

    def called_attributes(self) -> set[str]:
        """Names ``x`` such that the module calls ``something.x(...)`` (own hooks the project calls)."""
        if self._called_attrs is None:
            found: set[str] = set()
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    value = node.func.value
                    is_super = (
                        isinstance(value, ast.Call)
                        and isinstance(value.func, ast.Name)
                        and value.func.id == "super"
                    )
                    if not is_super:
                        found.add(node.func.attr)
            self._called_attrs = found
        return self._called_attrs


@dataclass
class ClassContext:
    node: ast.ClassDef
    role: str  # TRAINER, MIXIN or CALLBACK
    catalog_cls: str | None  # "Trainer"/"Seq2SeqTrainer"; None when no transformers catalogue applies
    third_party: bool  # a non-transformers library class (TRL, ...) sits between this class and Trainer
    module: ModuleContext
    catalog: Catalog | None
    view: VersionView | None
    project_methods: frozenset[str] = field(default_factory=frozenset)  # defined by project bases
    project_sets_tokenizer: bool = False
    # A catalogued third-party trainer (TRL) between this class and transformers' Trainer.
    library: str | None = None  # "trl"
    library_cls: str | None = None  # "GRPOTrainer"
    library_catalog: Catalog | None = None  # None when the catalogue does not know the class
    library_view: VersionView | None = None  # None when the class is absent at the target release

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def is_trainer(self) -> bool:
        return self.role in (TRAINER, MIXIN)

    @property
    def is_callback(self) -> bool:
        return self.role == CALLBACK

    @property
    def target(self) -> str | None:
        return self.view.version if self.view is not None else None

    def methods(self) -> list[FunctionNode]:
        return [s for s in self.node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def own_method_names(self) -> set[str]:
        return {m.name for m in self.methods()}

    def trainer_method(self, name: str) -> MethodInfo | None:
        """The catalogued Trainer method ``name`` at the target release (None if absent)."""
        if self.view is None or self.catalog_cls is None:
            return None
        return self.view.method(name, cls=self.catalog_cls)

    @property
    def library_label(self) -> str:
        """``trl.GRPOTrainer (trl 1.16.0)``: the class and release a library method belongs to."""
        version = self.library_view.version if self.library_view is not None else "?"
        return f"{self.library}.{self.library_cls} ({self.library} {version})"

    def library_method(self, name: str) -> MethodInfo | None:
        """The method as the third-party trainer (TRL) defines it at its target release, if it does."""
        if self.library_view is None or self.library_cls is None:
            return None
        return self.library_view.method(name, cls=self.library_cls)

    def ever_library_method(self, name: str) -> bool:
        if self.library_catalog is None or self.library_cls is None:
            return False
        return self.library_catalog.ever_defined(name, cls=self.library_cls)

    def ever_trainer_method(self, name: str) -> bool:
        if self.catalog is None or self.catalog_cls is None:
            return False
        return self.catalog.ever_defined(name, cls=self.catalog_cls)


class Rule:
    """Base class. Subclasses set the class attributes and implement ``check``."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]  # str.format template; the placeholders each rule documents
    roles: ClassVar[frozenset[str]] = frozenset({TRAINER, MIXIN})
    needs_catalog: ClassVar[bool] = True
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()
    FIX: ClassVar[str] = ""  # how to fix it by hand (Markdown); the page adds what `trainwright fix` does
    EVIDENCE: ClassVar[tuple[str, ...]] = ()  # issues/PRs where this broke real projects

    def check(self, ctx: ClassContext) -> Iterator[Finding]:  # pragma: no cover - interface
        raise NotImplementedError

    # -- reporting -------------------------------------------------------------------------------

    def report(
        self,
        ctx: ClassContext,
        node: ast.AST,
        message: str,
        *,
        method: str | None = None,
    ) -> Finding:
        line, col, end_line, end_col, noqa = node_span(node, ctx.module.lines)
        return Finding(
            code=self.code,
            name=self.name,
            message=message,
            path=ctx.module.path,
            line=line,
            column=col,
            end_line=end_line,
            end_column=end_col,
            class_name=ctx.name,
            method=method,
            noqa_lines=noqa,
            node=node,
        )

    # -- documentation ---------------------------------------------------------------------------

    @classmethod
    def explain(cls) -> str:
        """The rule's documentation page as Markdown: docstring, message, invalid and valid examples."""
        doc = inspect.cleandoc(cls.__doc__ or "")
        parts = [
            f"# {cls.code} {cls.name}",
            "",
            doc,
            "",
            "## Message",
            "",
            "```text",
            f"{cls.code} {cls.message}",
            "```",
        ]
        for title, examples in (("Flagged", cls.INVALID), ("Not flagged", cls.VALID)):
            if examples:
                parts += ["", f"## {title}"]
                for ex in examples[:3]:
                    parts.append("")
                    if ex.version:
                        parts += [f"Target transformers version: {ex.version}", ""]
                    parts += ["```python", inspect.cleandoc(ex.code), "```"]
        parts += ["", "## Fix", "", cls._fix_text()]
        if cls.EVIDENCE:
            parts += ["", "## Evidence", ""] + [f"- <{url}>" for url in cls.EVIDENCE]
        return "\n".join(parts).rstrip() + "\n"

    @classmethod
    def _fix_text(cls) -> str:
        from trainwright_lint.fixes import FIXABLE  # imported here: the fixer imports the rules' helpers

        automatic = {
            "safe": "`trainwright fix` (or `trainwright lint --fix`) applies this fix; `--diff` previews it.",
            "unsafe": "`trainwright fix --unsafe-fixes` applies this fix when it is unambiguous; it changes "
            "behaviour, so review the diff (`--diff`).",
        }.get(FIXABLE.get(cls.code, ""), "")
        suggest = (
            "`trainwright fix --suggest` prints a ready `TrainerCallback` carrying this logic (never written)."
            if cls.code.startswith("TW2")
            else ""
        )
        return " ".join(t for t in (inspect.cleandoc(cls.FIX), automatic, suggest) if t) or "Fix by hand."


_HEADER_END = re.compile(r":\s*(#.*)?$")


def node_span(node: ast.AST, lines: list[str]) -> tuple[int, int, int, int, tuple[int, int]]:
    """1-based (line, column, end_line, end_column) to report, and the lines whose ``# noqa`` counts.

    Definitions are reported on the ``def``/``class`` keyword, spanning the name, and their ``noqa``
    lines are the whole header (flake8 treats a multi-line header as one logical line).
    """
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        line = node.lineno
        col = node.col_offset
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        keyword = (
            "class "
            if isinstance(node, ast.ClassDef)
            else ("async def " if isinstance(node, ast.AsyncFunctionDef) else "def ")
        )
        start_name = text.find(node.name, col + len(keyword) - 1)
        end_col = (start_name + len(node.name)) if start_name >= 0 else col + len(keyword) + len(node.name)
        body_line = node.body[0].lineno if node.body else line
        header_end = line
        for candidate in range(line, max(line, body_line - 1) + 1):
            header_end = candidate
            code = lines[candidate - 1] if candidate <= len(lines) else ""
            if _HEADER_END.search(code):
                break
        return line, col + 1, line, end_col + 1, (line, header_end)
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    end_line = getattr(node, "end_lineno", None) or line
    end_col = getattr(node, "end_col_offset", None)
    if end_col is None:
        end_col = col
    return line, col + 1, end_line, end_col + 1, (line, end_line)
