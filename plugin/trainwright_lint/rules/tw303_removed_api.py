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
from trainwright_lint.syntax import FunctionNode, is_self, is_self_call
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
      A helper method that an event hands its kwargs to (`self.save_model(args, state, kwargs)`)
      reads the same dict and is reported too.
    """

    FIX = 'Use `self.processing_class` in Trainer subclasses and `kwargs["processing_class"]` in callbacks.'
    EVIDENCE = (
        "https://github.com/vllm-project/llm-compressor/pull/1895",
        "https://github.com/huggingface/setfit/issues/564",
    )

    code = "TW303"
    FACTS = (
        METHODS,
        ASSIGNS_TOKENIZER,
    )
    TRACKED_ATTRIBUTES = ("tokenizer",)  # `trainer.tokenizer = tok` anywhere provides it
    name = "removed-api"
    message = "{what} {why} in transformers {version}; use {instead}"
    roles = frozenset({TRAINER, MIXIN, CALLBACK})
    fix_applicability = SAFE
    fix_module = "trainwright_lint.rules.tw303_removed_api_fix"
    fix_pass = 4
    fix_title = "`self.tokenizer` -> `self.processing_class`"

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

    def fix_is_valid(self, ctx: ClassContext, edit: Edit) -> bool:  # type: ignore[override]  # a class rule
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
                    lambda c, fn=fn, node=node, kwarg=kwarg: self._key_read(c, fn.name, node, kwarg, [fn]),  # type: ignore[misc]
                    (EVENTS,),
                )
        for helper, node, dict_name, callers in _helper_key_reads(ctx):
            yield Candidate(
                lambda c, h=helper, n=node, d=dict_name, e=callers: self._key_read(c, h, n, d, e),  # type: ignore[misc]
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

    def _key_read(
        self, ctx: ClassContext, method: str, node: ast.AST, mapping: str, events: list[FunctionNode]
    ) -> Finding | None:
        """``mapping["tokenizer"]`` in ``method``, where ``mapping`` is the kwargs of ``events`` (the
        event itself, or the events that hand their kwargs to a helper): missing when one of them is not
        passed the key."""
        event = next((fn for fn in events if self._not_passed(ctx, fn)), None)
        if event is None:
            return None
        via = "" if event.name == method else f" (which hands its kwargs to `{method}`)"
        message = self.message.format(
            what=f'`{mapping}["tokenizer"]`',
            why=f"is not passed to `{event.name}`{via}",
            version=ctx.target,
            instead='`processing_class` (`kwargs["processing_class"]`)',
        )
        return self.report(ctx, node, message, method=method)


def _helper_key_reads(ctx: ClassContext) -> Iterator[tuple[str, ast.AST, str, list[FunctionNode]]]:
    """(helper, read, dict name, calling methods) for each ``<dict>["tokenizer"]`` read in a helper
    method whose ``<dict>`` parameter another method of the callback fills with its own ``**kwargs``:
    ``self.save_model(args, state, kwargs)`` or ``self._log(state, **kwargs)`` from ``on_save``. The
    copied Chinese-LLaMA-Alpaca ``SavePeftModelCallback`` reads the key there, not in the event."""
    methods = ctx.methods()
    for method, fn in methods:
        if method.name.startswith("on_") or method.kind != "method":
            continue  # an event reads its own kwargs (the direct check); no ``self`` to call it on
        lines = ctx.unit.lines_matching(method.line, method.end_line, _TOKENIZER_KEY)
        if not lines:
            continue
        calls = re.compile(rf"\bself\.{method.name}\s*\(")
        filled: dict[str, list[FunctionNode]] = {}
        for other, caller in methods:
            kwarg = caller.args.kwarg.arg if caller.args.kwarg else None
            if kwarg is None or other.name == method.name:
                continue
            at = ctx.unit.lines_matching(other.line, other.end_line, calls)
            for call in nodes_on_lines(caller, at, lambda n, m=method.name: is_self_call(n, m)):  # type: ignore[misc]
                assert isinstance(call, ast.Call)
                for name in _parameters_given(fn, call, kwarg):
                    filled.setdefault(name, []).append(caller)
        for name, callers in filled.items():
            for node in nodes_on_lines(fn, lines, lambda n, d=name: _reads_key(n, d, "tokenizer")):  # type: ignore[misc]
                yield method.name, node, name, callers


def _parameters_given(fn: FunctionNode, call: ast.Call, kwarg: str) -> set[str]:
    """The parameters of ``fn`` (a method) that ``call`` binds to the caller's ``kwarg`` dict: by
    position, by keyword, or ``fn``'s own ``**`` parameter for ``**kwarg``."""
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1:]  # after ``self``
    out: set[str] = set()
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break  # positions after ``*args`` are unknown
        if isinstance(arg, ast.Name) and arg.id == kwarg and i < len(positional):
            out.add(positional[i])
    for keyword in call.keywords:
        if not (isinstance(keyword.value, ast.Name) and keyword.value.id == kwarg):
            continue
        if keyword.arg is None:
            if fn.args.kwarg is not None:
                out.add(fn.args.kwarg.arg)
        elif keyword.arg in positional or keyword.arg in {a.arg for a in fn.args.kwonlyargs}:
            out.add(keyword.arg)
    return out


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
