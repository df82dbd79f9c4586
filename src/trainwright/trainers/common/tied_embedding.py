"""The tied input embedding's gradient added into the LM head's, with no vocabulary × hidden buffer of its own.

Why: with tied embeddings (Qwen2.5-0.5B: vocabulary 151,936 × hidden 896, 519 MiB) the embedding's
backward builds a dense gradient of the whole table (zero-filled, then the looked-up rows added), and
autograd then sums it with the head's gradient of the same tensor. That is the peak of a 0.5B training
step: measured with an RSS timeline on ``benchmarks/real_size.py``'s DPO set-up, +0.5 GiB in the last
0.9 s of the backward, after the last decoder layer. A sparse lookup gradient does not help: autograd
adds a sparse gradient that arrives after a dense one out of place (a new buffer again), and the head's
always arrives first (it is the first node of the backward).

So the head's weight gradient is handed over instead: :class:`~trainwright.trainers.common.lm_head.HeadLogps`
puts its ``(V, H)`` gradient into a :class:`TiedGradient` rather than returning it, and the lookup
(:class:`TiedLookup`), whose backward runs last, adds its rows into that tensor in place and returns it
as the weight's gradient. Autograd then sees one dense gradient: a single vocabulary × hidden buffer.
Same values as the plain path up to float rounding (the rows are added into the head's gradient, not
summed apart first). On CUDA, ``index_add_`` sums repeated rows with atomics, so the order of those
additions varies between runs unless ``torch.use_deterministic_algorithms(True)`` is on (which
``TrainingArguments(full_determinism=True)`` turns on), as for the other scatter-style kernels.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.modules import module as module_hooks


class TiedGradient:
    """The head's weight gradient of one forward, held until the tied lookup's backward takes it.

    ``lookups`` counts the lookups of this forward: a head call made before any (its hidden states
    cannot come from this lookup) returns its gradient to autograd as usual, so none is ever lost.
    """

    __slots__ = ("grad", "lookups")

    def __init__(self) -> None:
        self.grad: torch.Tensor | None = None
        self.lookups = 0

    def add(self, grad: torch.Tensor) -> None:
        if self.grad is None:
            self.grad = grad
        else:
            self.grad.add_(grad)

    def take(self) -> torch.Tensor | None:
        grad, self.grad = self.grad, None
        return grad


def tied_embedding(model: nn.Module) -> nn.Embedding | None:
    """``model``'s input embedding when :class:`TiedLookup` may stand in for calling it: a plain
    ``nn.Embedding`` (no ``max_norm``, no ``scale_grad_by_freq``) whose weight is the output
    embedding's, with no forward hook on it (NEFTune adds its noise through one) or on every module.
    The caller must call ``model`` itself, not a wrapper that synchronises or shards gradients."""
    try:
        embedding, head = model.get_input_embeddings(), model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None
    if type(embedding) is not nn.Embedding or getattr(head, "weight", None) is not embedding.weight:
        return None
    if embedding.max_norm is not None or embedding.scale_grad_by_freq:
        return None
    if embedding._forward_hooks or embedding._forward_pre_hooks:
        return None
    if module_hooks._global_forward_hooks or module_hooks._global_forward_pre_hooks:
        return None
    return embedding


class TiedLookup(torch.autograd.Function):
    """``embedding(input_ids)`` whose backward adds the looked-up rows' gradient into the head's (the
    module docstring): ``∂L/∂W = G_head + Σ_t onehot(x_t) ⊗ ∂L/∂e_t``, rows at ``padding_idx`` left out."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, input_ids: torch.Tensor, weight: torch.Tensor, padding_idx: int | None, tie: TiedGradient
    ) -> torch.Tensor:
        ctx.save_for_backward(input_ids)
        ctx.padding_idx, ctx.tie, ctx.shape = padding_idx, tie, weight.shape
        tie.lookups += 1
        return F.embedding(input_ids, weight, padding_idx)

    @staticmethod
    def backward(  # type: ignore[override]
        ctx: Any, grad_embeds: torch.Tensor
    ) -> tuple[None, torch.Tensor | None, None, None]:
        if not ctx.needs_input_grad[1]:
            return None, None, None, None
        (input_ids,) = ctx.saved_tensors
        grad = ctx.tie.take()
        if grad is None:  # no head gradient in this backward (the loss did not go through the head)
            grad = grad_embeds.new_zeros(ctx.shape)
        ids = input_ids.reshape(-1)
        rows = grad_embeds.reshape(ids.numel(), -1)
        if ctx.padding_idx is not None:
            keep = ids != ctx.padding_idx
            ids, rows = ids[keep], rows[keep]
        grad.index_add_(0, ids, rows.to(grad.dtype))
        return None, grad, None, None


def embed_tied(embedding: nn.Embedding, input_ids: torch.Tensor, tie: TiedGradient) -> torch.Tensor:
    """:class:`TiedLookup` of ``input_ids`` in ``embedding`` (a :func:`tied_embedding`)."""
    return TiedLookup.apply(input_ids, embedding.weight, embedding.padding_idx, tie)


__all__ = ["TiedGradient", "TiedLookup", "embed_tied", "tied_embedding"]
