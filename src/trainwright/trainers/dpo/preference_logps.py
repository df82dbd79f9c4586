"""Sequence log-probs of preference batches (DPO's ``[prompt+chosen; prompt+rejected]`` rows).

Kept next to :mod:`trainwright.trainers.common.logprobs` (the per-token kernels and the shared-prefix
forward they build on), so that the trainer module holds the training logic and the forward variants
(plain, shared prompt, padding-free) live in one place with their equivalence arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
from torch import nn

from trainwright.trainers.common.lm_head import FusedHead, backbone_hidden, fused_head, head_token_logps
from trainwright.trainers.common.logprobs import (
    SharedPrefix,
    continue_after_prefix,
    embed_tokens,
    log_sum_squared_probs,
    run_shared_prefix,
    token_logps_and_entropy,
)


class SequenceLogps(NamedTuple):
    """Per-row results of one forward pass over the 2B stacked sequences."""

    logps: torch.Tensor  # (2B,) sum of completion-token log-probs
    lengths: torch.Tensor  # (2B,) number of scored completion tokens
    logits_sum: torch.Tensor  # (2B,) sum over completion tokens of the vocabulary-mean logit (no grad)
    log_sum_sq: torch.Tensor | None = None  # (2B,) sum over completion tokens of log Σ_v p_v² (WPO; no grad)
    entropy_sum: torch.Tensor | None = (
        None  # (2B,) sum over completion tokens of the next-token entropy (no grad)
    )
    top1_sum: torch.Tensor | None = (
        None  # (2B,) completion tokens that are the argmax of their logits (no grad)
    )
    aux_loss: torch.Tensor | None = None  # the MoE load-balancing loss of the forward (None unless asked)
    unweighted_logps: torch.Tensor | None = None  # (2B,) with LD-DPO weights: the plain sum of log-probs


def sequence_logps(
    model: nn.Module,
    batch: dict[str, torch.Tensor],
    *,
    chunk_size: int = 4,
    logits_to_keep: bool = True,
    with_sum_sq: bool = False,
    cache_argument: str | None = None,
    min_shared_tokens: float = 1,
    min_split_tokens: float = 0,
    aux_loss: bool = False,
) -> SequenceLogps:
    """Summed log-probs of the completion tokens of every row of ``batch``.

    Logits at position ``t`` score token ``t+1``. Rows are right-padded and completions follow the
    prompt, so positions before the earliest completion token in the batch are never scored: with
    ``logits_to_keep`` the model projects only the last ``T - start`` hidden states onto the vocabulary.
    Log-probs use gather + logsumexp in row chunks (no ``(2B, T, V)`` log-softmax copy).
    A packed batch (``PreferenceCollator(padding_free=True)``) goes through :func:`packed_sequence_logps`.

    With ``cache_argument`` (the model's KV-cache argument, see
    :func:`~trainwright.trainers.common.logprobs.kv_cache_argument`) and a batch whose chosen row ``i`` and
    rejected row ``B + i`` agree on every column before the first scored one, the batch goes through
    :func:`shared_prompt_sequence_logps` instead, provided that saves at least ``min_shared_tokens``
    tokens (``B × start``: the prompt columns that are cached once per pair), and continues the two
    halves in separate calls when that skips at least ``min_split_tokens`` padding tokens (the
    trainer takes both from :func:`~trainwright.trainers.common.logprobs.sharing_cost`).

    A batch with ``logp_weights`` (LD-DPO, :class:`~trainwright.trainers.dpo.data.PreferenceCollator`) sums
    each token's log-prob with its weight; lengths and the other statistics count tokens unweighted. With
    ``aux_loss`` the model is asked for its router logits and its load-balancing loss is returned (one plain
    forward then).
    """
    if "sequence_index" in batch:
        return packed_sequence_logps(
            model, batch, chunk_size=chunk_size, with_sum_sq=with_sum_sq, aux_loss=aux_loss
        )
    rows = batch["input_ids"].shape[0]
    half = rows // 2
    share = cache_argument is not None and logits_to_keep and not aux_loss and half > 0 and rows == 2 * half
    bounds = _column_bounds(batch, share)
    start = bounds[0]
    if share and bounds[1] == start + 1 and start > 0 and half * start >= min_shared_tokens:
        padding = half * abs(bounds[2] - bounds[3])  # the shorter half's padding a split call skips
        shared = shared_prompt_sequence_logps(
            model,
            batch,
            start + 1,
            (bounds[2], bounds[3]),
            cache_argument,
            split=padding > 0 and padding >= min_split_tokens,
            chunk_size=chunk_size,
            with_sum_sq=with_sum_sq,
        )
        if shared is not None:
            return shared
    return _plain_sequence_logps(model, batch, start, chunk_size, logits_to_keep, with_sum_sq, aux_loss)


def _column_bounds(batch: dict[str, torch.Tensor], share: bool) -> list[int]:
    """``[start]``: the column before the earliest scored token; with ``share`` also the first column where a
    pair's two rows differ (or either is a completion token) and where each half's last attended column
    ends. One host sync for all of them."""
    input_ids, completion_mask = batch["input_ids"], batch["completion_mask"]
    attention_mask = batch["attention_mask"]
    target_mask = completion_mask[:, 1:]
    width = target_mask.shape[1]
    columns = torch.arange(width + 1, device=input_ids.device)
    bounds = [torch.where(target_mask.any(dim=0), columns[:width], width - 1).min()]
    if share:
        half = input_ids.shape[0] // 2
        differs = (
            (input_ids[:half] != input_ids[half:])
            | (attention_mask[:half] != attention_mask[half:])
            | (completion_mask[:half] != 0)
            | (completion_mask[half:] != 0)
        ).any(dim=0)
        ends = torch.where(attention_mask.bool(), columns + 1, 0).amax(dim=1)
        bounds += [torch.where(differs, columns, width + 2).min(), ends[:half].max(), ends[half:].max()]
    return torch.stack(bounds).tolist()


def _plain_sequence_logps(
    model: nn.Module,
    batch: dict[str, torch.Tensor],
    start: int,
    chunk_size: int,
    logits_to_keep: bool,
    with_sum_sq: bool,
    aux_loss: bool,
) -> SequenceLogps:
    """One forward over every row, scoring from column ``start`` on (the fused LM head when it applies)."""
    input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
    target_mask = batch["completion_mask"][:, 1:]
    weights = batch.get("logp_weights")
    kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask, "use_cache": False}
    row_weights = None if weights is None else weights[:, 1:][:, start:]
    head = None if aux_loss or with_sum_sq else fused_head(model)
    if head is not None:  # the LM head and the log-softmax in one node (trainers/common/lm_head.py)
        hidden = backbone_hidden(head, input_ids.shape[1] - start, **kwargs)[:, :-1]
        return _summed(
            [hidden], input_ids[:, start + 1 :], target_mask[:, start:], chunk_size, False, row_weights, head
        )
    if aux_loss:
        kwargs["output_router_logits"] = True
    if logits_to_keep:
        kwargs["logits_to_keep"] = input_ids.shape[1] - start
    outputs = model(**kwargs)
    logits = outputs.logits[:, :-1] if logits_to_keep else outputs.logits[:, start:-1]
    summed = _summed(
        [logits], input_ids[:, start + 1 :], target_mask[:, start:], chunk_size, with_sum_sq, row_weights
    )
    return summed._replace(aux_loss=getattr(outputs, "aux_loss", None)) if aux_loss else summed


def shared_prompt_sequence_logps(
    model: nn.Module,
    batch: dict[str, torch.Tensor],
    prompt_length: int,
    ends: tuple[int, int],
    cache_argument: str,
    *,
    split: bool = True,
    chunk_size: int = 4,
    with_sum_sq: bool = False,
) -> SequenceLogps | None:
    """:func:`sequence_logps` running each pair's shared prompt once; ``None`` if the model's cache cannot
    be reused.

    The chosen row ``i`` and the rejected row ``B + i`` hold the same first ``prompt_length`` (``k``)
    columns, so those run once for the ``B`` pairs (:func:`~trainwright.trainers.common.logprobs.run_shared_prefix`);
    then all ``2B`` rows continue from the prompt keys/values up to the longer half's end (``ends``: one
    past each half's last attended column), or, with ``split``, the chosen half and the rejected half
    each in its own call up to its own end, so the padding that the shorter half carries is not run
    either (one more model call and LM-head gradient: worth it only for a large length difference).
    Same values and gradients as the single forward, up to float rounding
    (:func:`~trainwright.trainers.common.logprobs.shared_prefix_logits`).
    """
    input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
    completion_mask, weights = batch["completion_mask"], batch.get("logp_weights")
    half, k = input_ids.shape[0] // 2, prompt_length
    if min(ends) <= k:
        return None
    pairs = torch.arange(half, device=input_ids.device)
    prefix = SharedPrefix(k, pairs, torch.cat([pairs, pairs]))
    head = None if with_sum_sq else fused_head(model)
    embeds = embed_tokens(model, input_ids, head)
    state = run_shared_prefix(model, input_ids, attention_mask, prefix, embeds)
    if state is None:
        return None
    if split:  # the pair order: row i of either half continues prefix i
        groups = [(slice(None, half), ends[0], None), (slice(half, None), ends[1], None)]
    else:
        groups = [(slice(None), max(ends), prefix.inverse)]
    parts = []
    for rows, end, index in groups:
        ids, mask = input_ids[rows, :end], attention_mask[rows, :end]
        rows_embeds = None if embeds is None else embeds[rows, :end]
        tail = continue_after_prefix(model, ids, mask, state, index, cache_argument, rows_embeds, head)
        if tail is None:
            return None
        row_weights = None if weights is None else weights[rows, k:end]
        parts.append(
            _summed(
                [tail], ids[:, k:], completion_mask[rows, k:end], chunk_size, with_sum_sq, row_weights, head
            )
        )
    if len(parts) == 1:
        return parts[0]
    chosen, rejected = parts
    return SequenceLogps(
        *(None if a is None else torch.cat([a, b]) for a, b in zip(chosen, rejected))  # type: ignore[arg-type]
    )


def _summed(
    pieces: Sequence[torch.Tensor],
    targets: torch.Tensor,
    target_mask: torch.Tensor,
    chunk_size: int,
    with_sum_sq: bool,
    weights: torch.Tensor | None = None,
    head: FusedHead | None = None,
) -> SequenceLogps:
    """Per-row sums over the scored tokens of logits given in consecutive column ``pieces``.

    ``targets`` / ``target_mask``: ``(n, t)`` the token each logit position scores and whether it counts;
    the pieces' widths add up to ``t``. ``weights`` (``(n, t)``, LD-DPO) weigh the log-probs' sum only.
    With ``head`` the pieces are the final hidden states of those positions, projected and scored in one
    node (:func:`~trainwright.trainers.common.lm_head.head_token_logps`; not with ``with_sum_sq``).
    """
    split = targets.split([piece.shape[1] for piece in pieces], dim=1)
    if head is not None:
        fused = [head_token_logps(head, p, t) for p, t in zip(pieces, split)]
        token_logps = torch.cat([f.logps for f in fused], dim=1)
        mean_logits = torch.cat([f.mean_logit for f in fused], dim=1)
        entropies = torch.cat([f.entropy for f in fused], dim=1)
        top1 = torch.cat([f.top1 for f in fused], dim=1)
    else:
        scored = [token_logps_and_entropy(p, t, chunk_size=chunk_size) for p, t in zip(pieces, split)]
        token_logps = torch.cat([logps for logps, _ in scored], dim=1)
        with torch.no_grad():
            mean_logits = torch.cat([piece.float().mean(dim=-1) for piece in pieces], dim=1)
            entropies = torch.cat([entropy for _, entropy in scored], dim=1)
            top1 = torch.cat([p.argmax(dim=-1) == t for p, t in zip(pieces, split)], dim=1)
    mask = target_mask.to(token_logps.dtype)
    with torch.no_grad():
        logits_sum = (mean_logits * mask).sum(dim=-1)
        entropy_sum = (entropies * mask).sum(dim=-1)
        top1_sum = (top1.to(mask.dtype) * mask).sum(dim=-1)
    log_sum_sq = None
    if with_sum_sq:
        per_token = torch.cat([log_sum_squared_probs(piece, chunk_size) for piece in pieces], dim=1)
        log_sum_sq = (per_token * mask).sum(dim=-1)
    plain = (token_logps * mask).sum(dim=-1)
    weighted = plain if weights is None else (token_logps * weights.to(mask.dtype)).sum(dim=-1)
    return SequenceLogps(
        weighted,
        mask.sum(dim=-1),
        logits_sum,
        log_sum_sq,
        entropy_sum,
        top1_sum,
        unweighted_logps=None if weights is None else plain,
    )


def packed_sequence_logps(
    model: nn.Module,
    batch: dict[str, torch.Tensor],
    *,
    chunk_size: int = 4,
    with_sum_sq: bool = False,
    aux_loss: bool = False,
) -> SequenceLogps:
    """:func:`sequence_logps` of a padding-free batch: one forward over the ``(1, L)`` packed row.

    ``position_ids`` restart at 0 for each sequence and no attention mask is passed, which is how
    transformers detects packed sequences and builds a block-diagonal causal mask (flash-attention
    kernels use the boundaries directly). A token is scored when it is a completion token *of the same
    sequence* as the position predicting it, so no sequence is scored from its neighbour's tokens; the
    per-token values are summed per sequence with ``index_add`` (no Python loop, no host sync).
    """
    input_ids, owner_of = batch["input_ids"], batch["sequence_index"]
    num_rows = batch["sequence_lengths"].shape[0]
    extra = {"output_router_logits": True} if aux_loss else {}
    outputs = model(input_ids=input_ids, position_ids=batch["position_ids"], use_cache=False, **extra)
    logits = outputs.logits[0, :-1]
    targets = input_ids[0, 1:]
    owner = owner_of[0, :-1]
    mask = (batch["completion_mask"][0, 1:].bool() & (owner_of[0, 1:] == owner)).to(logits.dtype)
    weights = batch.get("logp_weights")
    # chunks of about chunk_size sequences' worth of positions, as in the padded path
    chunk = chunk_size * max(1, logits.shape[0] // num_rows)
    token_logps, entropy = token_logps_and_entropy(
        logits.unsqueeze(1), targets.unsqueeze(1), chunk_size=chunk
    )

    def per_sequence(values: torch.Tensor) -> torch.Tensor:
        return values.new_zeros(num_rows).index_add(0, owner, values)

    with torch.no_grad():
        logits_sum = per_sequence(logits.float().mean(dim=-1) * mask)
        entropy_sum = per_sequence(entropy.squeeze(1) * mask)
        top1_sum = per_sequence((logits.argmax(dim=-1) == targets).to(mask.dtype) * mask)
        log_sum_sq = None
        if with_sum_sq:
            log_sum_sq = per_sequence(log_sum_squared_probs(logits.unsqueeze(1), chunk).squeeze(1) * mask)
    token_logps = token_logps.squeeze(1)
    plain = per_sequence(token_logps * mask)
    weighted = plain if weights is None else per_sequence(token_logps * mask * weights[0, 1:].to(mask.dtype))
    return SequenceLogps(
        weighted,
        per_sequence(mask),
        logits_sum,
        log_sum_sq,
        entropy_sum,
        top1_sum,
        getattr(outputs, "aux_loss", None) if aux_loss else None,
        None if weights is None else plain,
    )


__all__ = ["SequenceLogps", "packed_sequence_logps", "sequence_logps", "shared_prompt_sequence_logps"]
