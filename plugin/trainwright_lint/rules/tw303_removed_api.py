"""TW303: reading the removed ``tokenizer`` API."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from trainwright.catalog.versions import version_key
from trainwright_lint.analysis.facts import CLASS, METHODS, SharedFact
from trainwright_lint.analysis.unit import nodes_on_lines
from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.project.model import CALLBACK, MIXIN, TRAINER
from trainwright_lint.rules.base import EVENTS, SAFE, Candidate, ClassContext, Example, Rule, trainer_fact
from trainwright_lint.syntax import FunctionNode, is_self
from trainwright_lint.textscan import LiteralScan

# The project provides ``self.tokenizer`` itself (a subclass, a factory or a script assigns it).
ASSIGNS_TOKENIZER: SharedFact[bool] = SharedFact("project assigns the tokenizer", CLASS)


@dataclass(frozen=True)
class RenameSelfAttribute(Edit):
    """TW303: ``self.<old>`` read -> ``self.<new>`` on one line."""

    line: int
    old: str
    new: str
    unsafe: bool = False

    def describe(self) -> str:
        return f"Replace `self.{self.old}` with `self.{self.new}`"


class RemovedApi(Rule):
    """Code reads the `tokenizer` the Trainer no longer provides.

    - In a Trainer subclass: `self.tokenizer` was deprecated in 4.46 and removed in 5.0
      (`AttributeError`); use `self.processing_class`. Not reported when the project provides it:
      your class, a base, a subclass or a class a mixin is combined with assigns `self.tokenizer`, or
      code assigns it on an instance (`trainer.tokenizer = tok` in a factory).
    - In a callback: since 4.46 events receive `processing_class=` instead of `tokenizer=` (no alias),
      so `kwargs["tokenizer"]` raises `KeyError` and a `tokenizer` parameter silently stays `None`.
    """

    FIX = 'Use `self.processing_class` in Trainer subclasses and `kwargs["processing_class"]` in callbacks.'
    EVIDENCE = (
        "https://github.com/vllm-project/llm-compressor/pull/1895",
        "https://github.com/huggingface/setfit/issues/564",
    )

    code = "TW303"
    FACTS = (METHODS, ASSIGNS_TOKENIZER,)
    TRACKED_ATTRIBUTES = ("tokenizer",)  # `trainer.tokenizer = tok` anywhere provides it
    name = "removed-api"
    message = "{what} {why} in transformers {version}; use {instead}"
    roles = frozenset({TRAINER, MIXIN, CALLBACK})
    fix_applicability = SAFE
    fix_module = "trainwright_lint.rules.tw303_removed_api_fix"
    fix_pass = 4

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    pad = self.tokenizer.pad_token_id
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
            line=5,
            fixed="""
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    pad = self.processing_class.pad_token_id
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
        ),
        Example(
            """
            from transformers import TrainerCallback

            class PrintSamples(TrainerCallback):
                def on_evaluate(self, args, state, control, **kwargs):
                    tok = kwargs["tokenizer"]
                    print(tok.decode([1, 2]))
            """,
            line=5,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def __init__(self, *args, tokenizer=None, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.tokenizer = tokenizer

                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    pad = self.tokenizer.pad_token_id
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    pad = self.tokenizer.pad_token_id
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """,
            version="4.57.6",
        ),
    )

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        if ctx.catalog is None or ctx.view is None:
            return
        if ctx.is_callback:
            yield from self._callback(ctx)
        elif ctx.catalog_cls is not None and ctx.ever_trainer_method("tokenizer"):
            reads = (trainer_fact(ctx.catalog_cls, "tokenizer"), trainer_fact(ctx.catalog_cls, "__init__"))
            for method, node in _tokenizer_reads(ctx):
                yield Candidate(lambda c, m=method, n=node: self._trainer(c, m, n), reads)  # type: ignore[misc]

    def _trainer(self, ctx: ClassContext, method: str, node: ast.Attribute) -> Finding | None:
        assert ctx.catalog is not None and ctx.catalog_cls is not None and ctx.view is not None
        if ctx.trainer_method("tokenizer") is not None:
            return None
        history = ctx.catalog.method_history("tokenizer", cls=ctx.catalog_cls)
        # Before 4.46 ``tokenizer`` was a plain attribute (not catalogued as a member): only a release
        # after the last one that had the property has really removed it.
        if (
            history is None
            or history.last is None
            or version_key(ctx.view.version) <= version_key(history.last)
        ):
            return None
        if ctx.fact(ASSIGNS_TOKENIZER, None, lambda: project_assigns_tokenizer(ctx)):
            return None
        why = f"does not exist (last in {history.last})"
        message = self.message.format(
            what="`self.tokenizer`", why=why, version=ctx.target, instead="`self.processing_class`"
        )
        return self.report(ctx, node, message, method=method, fix=plan_tokenizer_rename(node))

    def fix_is_valid(self, ctx: ClassContext, edit: Edit) -> bool:
        """``self.processing_class`` exists from the release whose ``Trainer.__init__`` takes it."""
        if not isinstance(edit, RenameSelfAttribute):
            return False
        init = ctx.trainer_method("__init__")
        return init is not None and init.signature.param(edit.new) is not None

    def _callback(self, ctx: ClassContext) -> Iterator[Candidate]:
        """A callback event's ``tokenizer`` parameter or ``kwargs["tokenizer"]`` read, at releases
        whose event does not pass ``tokenizer``."""
        for method, fn in ctx.methods():
            for arg in (*fn.args.args, *fn.args.kwonlyargs):
                if arg.arg == "tokenizer":
                    yield Candidate(lambda c, fn=fn, arg=arg: self._callback_param(c, fn, arg), (EVENTS,))  # type: ignore[misc]
            kwarg = fn.args.kwarg.arg if fn.args.kwarg else None
            if kwarg is None:
                continue
            lines = ctx.unit.lines_matching(method.line, method.end_line, _TOKENIZER_KEY)
            for node in nodes_on_lines(fn, lines, lambda n, kw=kwarg: _reads_key(n, kw, "tokenizer")):  # type: ignore[misc]
                yield Candidate(
                    lambda c, fn=fn, node=node, kwarg=kwarg: self._callback_key(c, fn, node, kwarg),  # type: ignore[misc]
                    (EVENTS,),
                )

    @staticmethod
    def _not_passed(ctx: ClassContext, fn: FunctionNode) -> bool:
        assert ctx.view is not None
        event = ctx.view.events.get(fn.name)
        return event is not None and "tokenizer" not in event.kwargs

    def _callback_param(self, ctx: ClassContext, fn: FunctionNode, arg: ast.arg) -> Finding | None:
        if not self._not_passed(ctx, fn):
            return None
        message = self.message.format(
            what="the `tokenizer` parameter",
            why=f"is not passed to `{fn.name}` (it stays None)",
            version=ctx.target,
            instead="a `processing_class` parameter",
        )
        return self.report(ctx, arg, message, method=fn.name)

    def _callback_key(self, ctx: ClassContext, fn: FunctionNode, node: ast.AST, kwarg: str) -> Finding | None:
        if not self._not_passed(ctx, fn):
            return None
        message = self.message.format(
            what=f'`{kwarg}["tokenizer"]`',
            why=f"is not passed to `{fn.name}`",
            version=ctx.target,
            instead='`processing_class` (`kwargs["processing_class"]`)',
        )
        return self.report(ctx, node, message, method=fn.name)


_TOKENIZER_READ = LiteralScan("self.tokenizer", r"\b")
_TOKENIZER_KEY = re.compile(r"[\"']tokenizer[\"']")
_TOKENIZER_STORE = re.compile(
    r"\bself\.tokenizer\s*(?::[^=\n]+)?=(?!=)|setattr\(\s*self\s*,\s*[\"']tokenizer[\"']"
)


def _tokenizer_reads(ctx: ClassContext) -> list[tuple[str, ast.Attribute]]:
    """(method, node) of every ``self.tokenizer`` read in the class's own methods."""
    out: list[tuple[str, ast.Attribute]] = []
    for method, fn in ctx.methods():
        lines = ctx.unit.lines_matching(method.line, method.end_line, _TOKENIZER_READ)
        for node in nodes_on_lines(fn, lines, _is_tokenizer_read):
            assert isinstance(node, ast.Attribute)
            out.append((method.name, node))
    return sorted(out, key=lambda mn: (mn[1].lineno, mn[1].col_offset))


def _is_tokenizer_read(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "tokenizer"
        and is_self(node.value)
        and isinstance(node.ctx, ast.Load)
    )


def project_assigns_tokenizer(ctx: ClassContext) -> bool:
    """The project provides ``tokenizer`` itself: a class of the hierarchy (bases, subclasses, the
    classes a mixin is combined with) assigns ``self.tokenizer`` or defines it, or code elsewhere
    assigns ``.tokenizer`` on an instance of one of them (``trainer.tokenizer = tok`` in a factory,
    or on a variable named like a trainer whose class the file does not show)."""
    ws = ctx.workspace
    family = ws.hierarchy(ctx.key)
    for key in family:
        found = ws.class_of(key)
        if found is None:
            continue
        unit, cls = found
        if "tokenizer" in cls.methods or "tokenizer" in cls.class_attributes:
            return True
        if _TOKENIZER_STORE.search(unit.text(cls.line, cls.end_line)):
            return True
    names = {(ws.model.info(k).qualname or "").rsplit(".", 1)[-1] for k in family}
    for path, attr, receiver, built_from in list(ws.model.instance_stores()):
        if attr != "tokenizer":
            continue
        if not built_from:
            if "trainer" in receiver.lower():
                return True
            continue
        if built_from.rsplit(".", 1)[-1] not in names:
            continue
        resolved = ws.model.resolve(path, built_from)  # reads that file's imports only now
        if resolved.key in family or resolved.kind != "project-class":
            return True  # built from this class (or from something we cannot follow: stay silent)
    return False


def _reads_key(node: ast.AST, mapping: str, key: str) -> bool:
    """``mapping["key"]``, ``mapping.get("key")`` or ``mapping.pop("key")``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == mapping:
        return isinstance(node.slice, ast.Constant) and node.slice.value == key
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == mapping
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return node.args[0].value == key
    return False


# -- planning the fix (pure ``ast``; the libcst transform is in ``tw303_removed_api_fix``)


def plan_tokenizer_rename(node: ast.Attribute) -> RenameSelfAttribute | None:
    """Only a read of ``self.tokenizer`` (the trainer-side finding) has a mechanical fix."""
    if node.attr != "tokenizer" or not (isinstance(node.value, ast.Name) and node.value.id == "self"):
        return None
    return RenameSelfAttribute(line=node.lineno, old="tokenizer", new="processing_class")
