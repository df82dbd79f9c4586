"""Which definition ``super().m`` reaches from a class, across the project, transformers and TRL.

Shared by TW302 (is the ``super()`` call valid?) and TW301's fix (may a new parameter be forwarded to
``super()``?): a fix that forwards ``num_items_in_batch`` to a project base that does not take it
creates the very TW302 it should not, so both ask the same question in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainwright.catalog import Signature, VersionView
from trainwright_lint.project import library
from trainwright_lint.project.model import short_name, split_key
from trainwright_lint.rules.base import ClassContext


@dataclass(frozen=True, slots=True)
class SuperTarget:
    """The definition ``super().m`` reaches: its owner class and where it comes from (for messages),
    and its signature."""

    owner: str  # the class: `Trainer`, a project base `BaseTrainer`, TRL's `GRPOTrainer`
    signature: Signature
    upstream: bool  # transformers' own Trainer (the catalogue; the fix applies)
    release: str = ""  # " in trl 1.16.0" for a TRL class (transformers' release is the context's)


def super_target(
    ctx: ClassContext, concrete: str, method: str, view: VersionView | None = None
) -> SuperTarget | None:
    """The class after ``ctx``'s class in the MRO of ``concrete`` that defines ``method``, at the
    release being evaluated; None when an external class (whose methods we do not know) comes first
    or nothing defines it. ``view`` asks about another release of transformers than ``ctx``'s."""
    view = view if view is not None else ctx.view
    mro = ctx.workspace.model.info(concrete).mro_keys
    if ctx.key not in mro:
        return None
    for key in mro[mro.index(ctx.key) + 1 :]:
        if split_key(key) is not None:
            ref = ctx.workspace.method(key, method)
            if ref is not None:
                return SuperTarget(short_name(key), ref.method.signature, upstream=False)
            if ctx.workspace.model.defines(key, method):
                return None  # a class attribute, not a method we can check
            continue
        if key in (library.TRAINER, library.SEQ2SEQ):
            if view is None:
                return None
            cls = "Seq2SeqTrainer" if key == library.SEQ2SEQ else "Trainer"
            info = view.method(method, cls=cls)
            if info is None:
                continue
            if info.kind != "method":
                return None
            return SuperTarget(cls, info.signature, upstream=True)
        if key.startswith("trl.") and ctx.library_view is not None:
            short = key.split(".", 1)[1]
            if short not in ctx.library_view.classes:
                return None
            info = ctx.library_view.method(method, cls=short)
            # The TRL catalogue lists what a class and its TRL bases define: stop at the owner.
            if info is not None and (info.owner == short or f"trl.{info.owner}" not in mro):
                return SuperTarget(short, info.signature, False, f" in trl {ctx.library_view.version}")
            continue
        return None  # an external or unresolved class: its methods are unknown
    return None
