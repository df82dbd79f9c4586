"""Per-token log-probabilities without a full log-softmax.

Both reference trainers need ``log p(token_t | tokens_<t)`` for the tokens that were actually seen.
The obvious ``logits.log_softmax(-1).gather(-1, ids)`` materialises a second ``(B, T, V)`` tensor
(and its autograd buffer); with a 150k vocabulary that doubles peak memory. Instead we use

    log p(y) = logit_y - logsumexp(logits)

computed row-chunk by row-chunk, so the extra memory is one ``(chunk, T, V)`` block at most.
"""

from __future__ import annotations

import torch


def selective_log_softmax(logits: torch.Tensor, index: torch.Tensor, chunk_size: int = 4) -> torch.Tensor:
    """Return ``log_softmax(logits, -1).gather(-1, index[..., None])[..., 0]`` in O(chunk·T·V) extra memory.

    ``logits``: ``(B, T, V)`` float tensor; ``index``: ``(B, T)`` long tensor. Low-precision logits
    (bf16/fp16) are upcast chunk by chunk, because ``logsumexp`` in half precision loses the small
    differences that preference losses depend on.
    """
    if logits.shape[:-1] != index.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and index {tuple(index.shape)} do not line up")
    pieces = []
    for logits_chunk, index_chunk in zip(logits.split(chunk_size), index.split(chunk_size)):
        if logits_chunk.dtype in (torch.float16, torch.bfloat16):
            logits_chunk = logits_chunk.float()
        picked = torch.gather(logits_chunk, -1, index_chunk.unsqueeze(-1)).squeeze(-1)
        pieces.append(picked - torch.logsumexp(logits_chunk, dim=-1))
    return torch.cat(pieces)


def shifted_token_logps(
    logits: torch.Tensor, input_ids: torch.Tensor, chunk_size: int = 4
) -> torch.Tensor:
    """Log-probs of ``input_ids[:, 1:]`` under ``logits[:, :-1]``: the causal-LM alignment.

    Returns ``(B, T-1)``; position ``t`` holds ``log p(input_ids[:, t+1] | input_ids[:, :t+1])``.
    """
    return selective_log_softmax(logits[:, :-1], input_ids[:, 1:], chunk_size=chunk_size)


@torch.no_grad()
def log_sum_squared_probs(logits: torch.Tensor, chunk_size: int = 4) -> torch.Tensor:
    """``log Σ_v p_v²`` of each position's next-token distribution, ``(B, T)``, without gradient.

    ``Σ_v p_v² = Σ_v exp(2·z_v) / (Σ_v exp(z_v))²``, so its log is ``logsumexp(2z) − 2·logsumexp(z)``:
    computed chunk by chunk in float32 like :func:`selective_log_softmax`. WPO's pair weights use it
    (:func:`trainwright.trainers.dpo_losses.wpo_pair_weights`).
    """
    pieces = []
    for chunk in logits.split(chunk_size):
        chunk = chunk.float()
        pieces.append(torch.logsumexp(2 * chunk, dim=-1) - 2 * torch.logsumexp(chunk, dim=-1))
    return torch.cat(pieces)
