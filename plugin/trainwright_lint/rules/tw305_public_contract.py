"""TW305: a public override that cannot take every call the base method's public API allows."""

from __future__ import annotations

from collections.abc import Iterator

from trainwright.catalog import Signature
from trainwright.catalog.model import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
)
from trainwright_lint.analysis.callers import LIVE, call_site_reads, first_incompatible, live_callers
from trainwright_lint.analysis.facts import METHODS
from trainwright_lint.finding import Finding
from trainwright_lint.project.summary import MethodSummary
from trainwright_lint.rules.base import (
    Candidate,
    ClassContext,
    Example,
    Rule,
    library_class_fact,
    library_fact,
    trainer_fact,
)
from trainwright_lint.syntax import FunctionNode


def contract_gap(base: Signature, own: Signature) -> str | None:
    """The smallest call ``base``'s signature accepts that ``own`` cannot bind, described as a call
    (``predict(test_dataset)``), or None when ``own`` binds it.

    Python's binding rules decide, through ``Signature.accepts``. The calls tried are the public
    contract's minimum, the base's required parameters only, by position (keyword-only ones by
    keyword). A new required parameter breaks it; a renamed one does not count (see below); extra optional parameters, a changed default
    or a narrower set of optional ones (``evaluate(self, eval_dataset=None)``) do not, since callers
    that pass those are the library's own, which TW301 checks."""
    params = base.call_params
    if any(p.kind in (VAR_POSITIONAL, VAR_KEYWORD) for p in params):
        return None  # a forwarding base (``training_step(self, *args, **kwargs)``) documents no contract
    positional = [p for p in params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    named = [p for p in params if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)]
    required_kwonly = [p.name for p in named if p.kind == KEYWORD_ONLY and not p.has_default]
    n_required_pos = sum(1 for p in positional if not p.has_default)
    # Only the positional minimum: a renamed parameter (``compute_loss(self, my_model, inputs)``) breaks
    # just keyword calls by the base's names, which almost no caller of these methods makes; flagging
    # every rename would bury the breaks that matter (a new required parameter) in notes.
    n, keywords = n_required_pos, required_kwonly
    if not base.accepts(n, keywords) or own.accepts(n, keywords):
        return None
    args = [p.name for p in positional[:n]] + [f"{k}=..." for k in keywords]
    return "(" + ", ".join(args) + ")"


class PublicContract(Rule):
    """A public override (`predict`, `evaluate`, `create_model_card`, `save_model`, ...) whose
    parameters cannot take every call the base method's documented signature allows, while no
    transformers or TRL code of the target release makes such a call (a call that fails at run time
    is TW301's).

    Public methods are called by your own scripts, by other libraries, by the next release of the
    Trainer, and by colleagues who read the transformers documentation: `trainer.predict(test_dataset=ds)`
    fails on `predict(self, predict_dataset, predict_examples)`, and `trainer.push_to_hub(...)` forwards
    its keyword arguments to a `create_model_card(self, model_name, dataset_name, tags)` that requires
    what the documented API never passes. It works today only as long as every caller knows the
    override's private contract. The finding is a lower-severity note: it names the public API and the
    call that breaks it.

    Not flagged: overrides that accept every call of the base signature (extra optional parameters,
    `*args, **kwargs`), private methods, and overrides TW301 already reports.
    """

    FIX = (
        "Keep the base method's parameters (names, order and defaults) and add yours after them with "
        "defaults, or accept `*args, **kwargs`; give a new required input its own method name instead."
    )
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/trainer",)

    USE_INSTEAD = """
        from transformers import Trainer

        class QATrainer(Trainer):
            def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test", examples=None):
                output = super().predict(test_dataset, ignore_keys, metric_key_prefix)
                return output if examples is None else self.post_process(examples, output)
    """

    code = "TW305"
    FACTS = (
        METHODS,
        LIVE,
    )
    name = "public-contract-break"
    severity = "note"
    message = (
        "`{method}` cannot take the public call `{owner}.{method}{call}`; its signature is "
        "`{method}{signature}`, the public API's is `{owner}.{method}{base}`; no {library} code at {version} "
        "makes that call, but callers that follow the documented signature fail"
    )

    INVALID = (
        Example(
            """
            from transformers import Trainer

            class QATrainer(Trainer):
                def predict(self, predict_dataset, predict_examples, ignore_keys=None, metric_key_prefix="test"):
                    output = super().predict(predict_dataset, ignore_keys, metric_key_prefix)
                    return self.post_process(predict_examples, output)
            """,
            line=4,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class QATrainer(Trainer):
                def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test", examples=None):
                    output = super().predict(test_dataset, ignore_keys, metric_key_prefix)
                    return output if examples is None else self.post_process(examples, output)
            """
        ),
    )

    def candidates(self, ctx: ClassContext) -> Iterator[Candidate]:
        if ctx.catalog_cls is None and ctx.library_cls is None:
            return
        for method, fn in ctx.methods():
            if method.name.startswith("_") or method.kind != "method":
                continue
            reads = [*call_site_reads(ctx, method)]
            if ctx.catalog_cls is not None:
                reads.append(trainer_fact(ctx.catalog_cls, method.name))
            if ctx.library_cls is not None:
                reads += [library_fact(ctx.library_cls, method.name), library_class_fact(ctx.library_cls)]
            yield Candidate(
                lambda c, method=method, fn=fn: self._judge(c, method, fn),  # type: ignore[misc]
                tuple(dict.fromkeys(reads)),
            )

    def _judge(self, ctx: ClassContext, method: MethodSummary, fn: FunctionNode) -> Finding | None:
        live = live_callers(ctx)
        library = ctx.library_method(method.name)
        trainer = ctx.trainer_method(method.name)
        if any(
            first_incompatible(method.signature, found.call_sites, calls) is not None
            for found, calls in ((library, live.trl), (trainer, live.transformers_calling(method.name)))
            if found is not None
        ):
            return None  # a live call fails: TW301
        if library is not None and library.kind == "method":
            info, owner, where = library, ctx.library_label, "TRL"
        elif trainer is not None and trainer.kind == "method":
            info, owner, where = trainer, ctx.catalog_cls or "Trainer", "transformers"
        else:
            return None
        call = contract_gap(info.signature, method.signature)
        if call is None:
            return None
        message = self.message.format(
            method=method.name,
            signature=method.signature.text,
            call=call,
            owner=owner,
            base=info.signature.text,
            library=where,
            version=ctx.target,
        )
        return self.report(ctx, fn, message, method=method.name)
