"""TW101: overriding a private ``Trainer`` method."""

from __future__ import annotations

from collections.abc import Iterator

from trainwright_lint.analysis.facts import FINGERPRINTS, METHODS
from trainwright_lint.analysis.upstream import copy_of
from trainwright_lint.finding import Finding
from trainwright_lint.project.summary import MethodSummary
from trainwright_lint.rules._advice import alternative
from trainwright_lint.rules.base import EVERY_RELEASE, ClassContext, Example, Rule
from trainwright_lint.syntax import FunctionNode


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _copy_note(ctx: ClassContext, fn: FunctionNode) -> str:
    """``; it is a copy of `Trainer._inner_training_loop` (transformers 4.38.0) with 12 changed
    statements``: the release the copy was taken from is the one to compare against when upgrading."""
    found = copy_of(fn, ctx.upstream_owners(fn.name), ctx.unit.facts)
    if found is None:
        return ""
    changed = f"{found.changed} changed statement{'s' if found.changed != 1 else ''}"
    return f"; it is a copy of `{found.owner}` ({found.library} {found.release}) with {changed}"


class PrivateOverride(Rule):
    """A Trainer subclass (or a mixin combined with one) overrides a `_`-prefixed method that
    `transformers.Trainer` defines, at the target release or at an earlier catalogued one.

    Private methods are not an extension point: transformers changes their signatures and bodies in
    minor releases (`_save_checkpoint` lost `metrics` in 4.47, `_get_train_sampler` gained
    `train_dataset` in 4.52, `_maybe_log_save_evaluate` changed four times, `_inner_training_loop`
    was split in 5.3), and every such change breaks the override with a `TypeError` or, worse,
    silently bypasses new behaviour. The message names the public method, callback event or
    argument to use instead (from the catalogue's guidance).

    Only names the transformers Trainer defines are checked: a private helper your own class (or
    your own base class) introduces is not an override.
    """

    FIX = (
        "Override the public method the message names, or move the logic to a `TrainerCallback` event; if"
        " nothing public fits, pin the transformers (or TRL) version and add a test that fails when the "
        "private signature changes."
    )
    EVIDENCE = (
        "https://github.com/zjysteven/lmms-finetune/issues/65",
        "https://github.com/hiyouga/LlamaFactory/issues/8207",
        "https://github.com/huggingface/trl/pull/4981",
        "https://github.com/IntelLabs/multimodal_cognitive_ai/pull/31",
    )

    USE_INSTEAD = """
        from transformers import Trainer, TrainerCallback

        class SaveExtras(TrainerCallback):
            def on_save(self, args, state, control, **kwargs):
                save_extras(args.output_dir, state.global_step)

        trainer = Trainer(model=model, args=args, callbacks=[SaveExtras()])
    """

    code = "TW101"
    FACTS = (METHODS, FINGERPRINTS)
    name = "private-override"
    release_facts = EVERY_RELEASE  # "defined in some catalogued release" does not depend on the target
    message = "`{method}` overrides a private Trainer method{churn}; instead, {alternative}"

    library_message = (
        "`{method}` overrides a private method of {owner}{churn}; the library changes private methods "
        "between releases: override a public method or use a TrainerCallback instead"
    )

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial):
                    super()._save_checkpoint(model, trial)
                    self.save_extras()
            """,
            line=4,
        ),
        Example(
            """
            from transformers import Trainer as HFTrainer

            class MyTrainer(HFTrainer):
                def _get_train_sampler(self, train_dataset=None):
                    return None
            """,
            line=4,
        ),
        Example(
            """
            import transformers as tf

            class LoggingMixin:
                def _maybe_log_save_evaluate(self, *args, **kwargs):
                    return super()._maybe_log_save_evaluate(*args, **kwargs)

            class MyTrainer(LoggingMixin, tf.Trainer):
                pass
            """,
            line=4,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def _my_helper(self):  # our own private helper, not a Trainer method
                    return 1

                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            """
        ),
        Example(
            """
            class NotATrainer:
                def _save_checkpoint(self, model, trial):
                    pass
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        if ctx.catalog is None or ctx.catalog_cls is None:
            return
        for method, fn in ctx.methods():
            if not is_private(method.name):
                continue
            if not ctx.ever_trainer_method(method.name):
                if ctx.ever_library_method(method.name):
                    yield self._library_finding(ctx, method, fn)
                continue
            history = ctx.catalog.method_history(fn.name, cls=ctx.catalog_cls)
            churn = ""
            if history is not None and len(history.signatures) > 1:
                changes = ", ".join(first for first, _, _ in history.signatures[1:])
                churn = f" (its signature changed in {changes})"
            elif history is not None and history.last is not None:
                churn = f" (removed after {history.last})"
            message = self.message.format(
                method=fn.name, churn=churn + _copy_note(ctx, fn), alternative=alternative(ctx, fn.name)
            )
            yield self.report(ctx, fn, message, method=fn.name)

    def _library_finding(self, ctx: ClassContext, method: MethodSummary, fn: FunctionNode) -> Finding:
        """A private method a third-party trainer (TRL) defines itself, e.g. GRPOTrainer's
        ``_generate_and_score_completions``: named with the library, class and release it belongs to."""
        assert ctx.library_catalog is not None and ctx.library_cls is not None
        history = ctx.library_catalog.method_history(fn.name, cls=ctx.library_cls)
        churn = ""
        if history is not None and len(history.signatures) > 1:
            changes = ", ".join(first for first, _, _ in history.signatures[1:])
            churn = f" (its signature changed in {ctx.library} {changes})"
        elif history is not None and history.last is not None:
            churn = f" (removed after {ctx.library} {history.last})"
        message = self.library_message.format(
            method=fn.name, owner=ctx.library_label, churn=churn + _copy_note(ctx, fn)
        )
        return self.report(ctx, fn, message, method=fn.name)
