"""Per-token log-probs straight from hidden states: the LM head and the log-softmax in one autograd node.

Why: at Qwen2.5-0.5B's size (vocabulary 151,936, hidden 896, tied embeddings) the plain path
``model(...).logits`` → ``logsumexp`` / ``gather`` peaks in the backward with three vocabulary × hidden
buffers alive (519 MiB each): the embedding's dense gradient, the LM head's weight gradient, which
``nn.Linear``'s backward returns as a view (the transpose of the ``(H, V)`` product), and their sum:
autograd adds two gradients of one tensor in place only into a gradient that is not a view. On top,
the ``(N, V)`` logits are saved for backward, and their backward builds two more ``(N, V)`` gradients
(one from ``logsumexp``, one from ``gather``).

:class:`HeadLogps` computes, for ``N`` kept positions with hidden states ``h`` and targets ``y``,

    z = (h Wᵀ + b) / τ,      log p(y) = z_y − logsumexp(z)

and keeps one ``(N, V)`` buffer: after the forward's statistics it is turned into the softmax ``p`` in
place, and the backward turns it into ``∂L/∂z = g · (onehot(y) − p) / τ`` in place (``g`` the incoming
gradient of ``log p(y)``). The weight gradient is ``∂L/∂zᵀ h``, a tensor of its own in ``W``'s
``(V, H)`` layout, so autograd can add the tied embedding's dense gradient into it in place: two
vocabulary × hidden buffers at the peak instead of three. With a tied embedding that the trainer looks
up itself, the head's gradient is handed to the lookup instead of being returned
(``trainers/common/tied_embedding.py``): one buffer. No logits are recomputed (the backward costs the same two
matmuls as ``nn.Linear``'s).

:func:`fused_head` says when a model can use it: a plain ``nn.Linear`` output embedding applied to
the backbone's last hidden state with nothing in between (model types in :data:`PLAIN_HEAD_MODELS`),
called directly (not through DDP / ``torch.compile`` / PEFT, which must see their own forward).
Otherwise the callers keep the plain path (``trainers/common/logprobs.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch import nn
from transformers import PreTrainedModel

from trainwright.trainers.common.tied_embedding import TiedGradient, embed_tied, tied_embedding

#: Model types whose ``*ForCausalLM.forward`` is ``lm_head(backbone(...).last_hidden_state[:, keep])``
#: with no logit scaling or soft-capping in between (read in transformers 5.24's modeling files).
PLAIN_HEAD_MODELS = frozenset({"qwen2", "qwen3", "llama", "mistral", "qwen2_moe", "qwen3_moe", "gpt2"})
#: Config fields that transform the logits after the head; a model setting any of them is not plain.
LOGIT_TRANSFORMS = (
    "final_logit_softcapping",
    "logit_scale",
    "output_multiplier",
    "lm_head_multiplier",
    "logits_scaling",
)
#: Rows of ``p`` converted per pass in the forward: bounds the ``(rows, V)`` temporary of the entropy.
ROW_CHUNK = 64


class FusedHead(NamedTuple):
    """What :class:`HeadLogps` needs from a model: its backbone and its output embedding's parameters."""

    backbone: nn.Module
    weight: torch.Tensor  # (V, H)
    bias: torch.Tensor | None  # (V,)
    embedding: nn.Embedding | None = None  # the input embedding when tied to the head (tied_embedding)
    tie: TiedGradient | None = None  # this forward's hand-over of the head's gradient to the embedding


class HeadScores(NamedTuple):
    """Per-position results of :func:`head_token_logps`, each ``(N,)``; all but ``logps`` without grad."""

    logps: torch.Tensor
    entropy: torch.Tensor
    mean_logit: torch.Tensor
    top1: torch.Tensor  # bool: the target is the first argmax of the logits


def fused_head(model: nn.Module) -> FusedHead | None:
    """``model``'s :class:`FusedHead`, or ``None`` when its logits are not a plain projection of the
    backbone's last hidden state, or it is wrapped (see the module docstring)."""
    if not isinstance(model, PreTrainedModel) or hasattr(model, "peft_config"):
        return None
    if "forward" in vars(model) or model._forward_hooks or model._forward_pre_hooks:
        return None  # a forward patched on the instance (Accelerate's mixed-precision autocast) or hooked
    config = model.config
    if getattr(config, "model_type", None) not in PLAIN_HEAD_MODELS:
        return None
    if any(getattr(config, name, None) is not None for name in LOGIT_TRANSFORMS):
        return None
    head = model.get_output_embeddings()
    backbone = getattr(model, model.base_model_prefix, None)
    if type(head) is not nn.Linear or not isinstance(backbone, nn.Module) or backbone is model:
        return None
    embedding = tied_embedding(model)
    return FusedHead(
        backbone, head.weight, head.bias, embedding, None if embedding is None else TiedGradient()
    )


def embed_ids(head: FusedHead, input_ids: torch.Tensor) -> torch.Tensor | None:
    """The input embeddings of ``input_ids`` through ``head``'s tie (``trainers/common/tied_embedding.py``), or
    ``None`` when the embedding is not tied or no gradient is being recorded (then call the model with
    the ids)."""
    if head.tie is None or head.embedding is None or not torch.is_grad_enabled():
        return None
    return embed_tied(head.embedding, input_ids, head.tie)


def backbone_hidden(head: FusedHead, keep: int, **kwargs: Any) -> torch.Tensor:
    """The last ``keep`` positions' final hidden states ``(N, keep, H)`` (``keep=0``: all), as the
    model's forward would project them; ``kwargs`` are the model call's (ids or embeddings, masks,
    cache). Ids go through the tied lookup when there is one (:func:`embed_ids`)."""
    if "input_ids" in kwargs:
        embeds = embed_ids(head, kwargs["input_ids"])
        if embeds is not None:
            del kwargs["input_ids"]
            kwargs["inputs_embeds"] = embeds
    hidden = head.backbone(**kwargs).last_hidden_state
    return hidden if keep == 0 else hidden[:, -keep:]


class HeadLogps(torch.autograd.Function):
    """``log softmax((h Wᵀ + b) / τ)[y]`` per row with one ``(N, V)`` buffer (see the module docstring).

    Forward outputs: log-probs ``(N,)`` (differentiable), entropy, mean logit (of ``z``) and top-1 flags
    (not differentiable). The saved buffer is consumed by the backward, so the graph cannot be run
    backward twice (``retain_graph``): a second call raises.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        hidden: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        targets: torch.Tensor,
        temperature: float,
        tie: TiedGradient | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        z = hidden @ weight.t() if bias is None else torch.addmm(bias, hidden, weight.t())
        if z.dtype in (torch.float16, torch.bfloat16):
            z = z.float()  # logsumexp in half precision loses what preference losses depend on
        if temperature != 1.0:
            z.div_(temperature)
        lse = torch.logsumexp(z, dim=-1)
        logps = z.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - lse
        mean_logit = z.mean(dim=-1)
        top1 = z.argmax(dim=-1) == targets
        entropy = torch.empty_like(lse)
        for rows in range(0, z.shape[0], ROW_CHUNK):
            block = z[rows : rows + ROW_CHUNK]
            block.sub_(lse[rows : rows + ROW_CHUNK].unsqueeze(-1))  # log p
            probs = block.exp()
            entropy[rows : rows + ROW_CHUNK] = -(probs * block).sum(dim=-1)
            block.copy_(probs)  # z now holds p
        ctx.save_for_backward(hidden, weight, bias, targets, z)
        ctx.temperature = temperature
        ctx.tie = tie if tie is not None and tie.lookups > 0 else None  # a lookup will take the gradient
        ctx.consumed = False
        ctx.mark_non_differentiable(entropy, mean_logit, top1)
        return logps, entropy, mean_logit, top1

    @staticmethod
    def backward(  # type: ignore[override]
        ctx: Any, grad_logps: torch.Tensor, *_: Any
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None, None, None, None]:
        if ctx.consumed:
            raise RuntimeError(
                "HeadLogps: the graph was already run backward (retain_graph is not supported)"
            )
        ctx.consumed = True
        hidden, weight, bias, targets, grad = ctx.saved_tensors
        g = grad_logps.to(grad.dtype).unsqueeze(-1)
        grad.mul_(-g).scatter_add_(-1, targets.unsqueeze(-1), g)  # g · (onehot(y) − p)
        if ctx.temperature != 1.0:
            grad.div_(ctx.temperature)
        grad = grad.to(weight.dtype)
        need_hidden, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_hidden = grad @ weight if need_hidden else None
        grad_weight = grad.t() @ hidden if need_weight else None  # (V, H), not a view
        grad_bias = grad.sum(dim=0) if need_bias and bias is not None else None
        if grad_weight is not None and ctx.tie is not None:
            ctx.tie.add(grad_weight)  # the tied lookup's backward returns it, with its rows added
            grad_weight = None
        return grad_hidden, grad_weight, grad_bias, None, None, None


def head_token_logps(
    head: FusedHead, hidden: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> HeadScores:
    """:class:`HeadScores` of hidden states ``(..., H)`` and targets ``(...)`` (same leading shape)."""
    shape = targets.shape
    flat = hidden.reshape(-1, hidden.shape[-1])
    if flat.dtype != head.weight.dtype:
        flat = flat.to(head.weight.dtype)
    outputs = HeadLogps.apply(flat, head.weight, head.bias, targets.reshape(-1), float(temperature), head.tie)
    return HeadScores(*(out.view(shape) for out in outputs))


__all__ = [
    "FusedHead",
    "HeadLogps",
    "HeadScores",
    "backbone_hidden",
    "embed_ids",
    "fused_head",
    "head_token_logps",
]
