"""TW303: reading the removed ``tokenizer`` API."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright.catalog.versions import version_key
from trainwright_lint.finding import Finding
from trainwright_lint.resolve import CALLBACK, MIXIN, TRAINER
from trainwright_lint.rules._ast import body_nodes, is_self
from trainwright_lint.rules.base import ClassContext, Example, Rule


class RemovedApi(Rule):
    """Code reads the `tokenizer` the Trainer no longer provides.

    - In a Trainer subclass: `self.tokenizer` was deprecated in 4.46 and removed in 5.0
      (`AttributeError`); use `self.processing_class`. Not reported when your class (or a project base
      class) assigns `self.tokenizer` itself.
    - In a callback: since 4.46 events receive `processing_class=` instead of `tokenizer=` (no alias),
      so `kwargs["tokenizer"]` raises `KeyError` and a `tokenizer` parameter silently stays `None`.
    """

    FIX = 'Use `self.processing_class` in Trainer subclasses and `kwargs["processing_class"]` in callbacks.'
    EVIDENCE = (
        "https://github.com/vllm-project/llm-compressor/pull/1895",
        "https://github.com/huggingface/setfit/issues/564",
    )

    code = "TW303"
    name = "removed-api"
    message = "{what} {why} in transformers {version}; use {instead}"
    roles = frozenset({TRAINER, MIXIN, CALLBACK})

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

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        if ctx.catalog is None or ctx.view is None:
            return
        if ctx.is_callback:
            yield from self._callback(ctx)
        elif ctx.catalog_cls is not None:
            yield from self._trainer(ctx)

    def _trainer(self, ctx: ClassContext) -> Iterator[Finding]:
        assert ctx.catalog is not None and ctx.catalog_cls is not None and ctx.view is not None
        if ctx.trainer_method("tokenizer") is not None or not ctx.ever_trainer_method("tokenizer"):
            return
        if (
            ctx.project_sets_tokenizer
            or "tokenizer" in ctx.own_method_names()
            or "tokenizer" in ctx.project_methods
        ):
            return
        if any(
            isinstance(n, ast.Attribute)
            and n.attr == "tokenizer"
            and is_self(n.value)
            and isinstance(n.ctx, ast.Store)
            for n in ast.walk(ctx.node)
        ):
            return
        history = ctx.catalog.method_history("tokenizer", cls=ctx.catalog_cls)
        # Before 4.46 ``tokenizer`` was a plain attribute (not catalogued as a member): only a release
        # after the last one that had the property has really removed it.
        if (
            history is None
            or history.last is None
            or version_key(ctx.view.version) <= version_key(history.last)
        ):
            return
        why = f"does not exist (last in {history.last})"
        for fn in ctx.methods():
            for node in body_nodes(fn):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "tokenizer"
                    and is_self(node.value)
                    and isinstance(node.ctx, ast.Load)
                ):
                    message = self.message.format(
                        what="`self.tokenizer`",
                        why=why,
                        version=ctx.target,
                        instead="`self.processing_class`",
                    )
                    yield self.report(ctx, node, message, method=fn.name)

    def _callback(self, ctx: ClassContext) -> Iterator[Finding]:
        assert ctx.view is not None
        events = ctx.view.events
        for fn in ctx.methods():
            event = events.get(fn.name)
            if event is None or "tokenizer" in event.kwargs:
                continue
            why = f"is not passed to `{fn.name}`"
            instead = '`processing_class` (`kwargs["processing_class"]`)'
            kwarg = fn.args.kwarg.arg if fn.args.kwarg else None
            for arg in (*fn.args.args, *fn.args.kwonlyargs):
                if arg.arg == "tokenizer":
                    yield self.report(
                        ctx,
                        arg,
                        self.message.format(
                            what="the `tokenizer` parameter",
                            why=why + " (it stays None)",
                            version=ctx.target,
                            instead="a `processing_class` parameter",
                        ),
                        method=fn.name,
                    )
            if kwarg is None:
                continue
            for node in body_nodes(fn):
                if _reads_key(node, kwarg, "tokenizer"):
                    message = self.message.format(
                        what=f'`{kwarg}["tokenizer"]`', why=why, version=ctx.target, instead=instead
                    )
                    yield self.report(ctx, node, message, method=fn.name)


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
