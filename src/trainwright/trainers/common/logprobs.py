"""Per-token log-probabilities without a full log-softmax.

Both reference trainers need ``log p(token_t | tokens_<t)`` for the tokens that were actually seen.
The obvious ``logits.log_softmax(-1).gather(-1, ids)`` materialises a second ``(B, T, V)`` tensor
(and its autograd buffer); with a 150k vocabulary that doubles peak memory. Instead we use

    log p(y) = logit_y - logsumexp(logits)

computed row-chunk by row-chunk, so the extra memory is one ``(chunk, T, V)`` block at most.
"""

from __future__ import annotations

import inspect
import math
import weakref
from typing import Any, NamedTuple

import torch
from torch import nn

from trainwright.trainers.common.lm_head import FusedHead, backbone_hidden, embed_ids


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


def token_logps_and_entropy(
    logits: torch.Tensor, index: torch.Tensor, chunk_size: int = 4, entropy_grad: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`selective_log_softmax` and each position's entropy ``H = logsumexp(z) − Σ_v p_v z_v``, (B, T) each.

    Both come from the same chunk and share its ``logsumexp``, so the entropy costs one more
    elementwise pass over the chunk's vocabulary (TRL computes it from the full logits). Without
    ``entropy_grad`` (the entropy only feeds the logs or a token mask) it is computed under ``no_grad``,
    keeping no ``(chunk, T, V)`` softmax for the backward.
    """
    if logits.shape[:-1] != index.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and index {tuple(index.shape)} do not line up")
    logps, entropies = [], []
    for logits_chunk, index_chunk in zip(logits.split(chunk_size), index.split(chunk_size)):
        if logits_chunk.dtype in (torch.float16, torch.bfloat16):
            logits_chunk = logits_chunk.float()
        lse = torch.logsumexp(logits_chunk, dim=-1)
        picked = torch.gather(logits_chunk, -1, index_chunk.unsqueeze(-1)).squeeze(-1)
        logps.append(picked - lse)
        with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
            probs = torch.exp(logits_chunk - lse.unsqueeze(-1))
            entropies.append(lse - (probs * logits_chunk).sum(-1))
    return torch.cat(logps), torch.cat(entropies)


def shifted_token_logps(logits: torch.Tensor, input_ids: torch.Tensor, chunk_size: int = 4) -> torch.Tensor:
    """Log-probs of ``input_ids[:, 1:]`` under ``logits[:, :-1]``: the causal-LM alignment.

    Returns ``(B, T-1)``; position ``t`` holds ``log p(input_ids[:, t+1] | input_ids[:, :t+1])``.
    """
    return selective_log_softmax(logits[:, :-1], input_ids[:, 1:], chunk_size=chunk_size)


@torch.no_grad()
def log_sum_squared_probs(logits: torch.Tensor, chunk_size: int = 4) -> torch.Tensor:
    """``log Σ_v p_v²`` of each position's next-token distribution, ``(B, T)``, without gradient.

    ``Σ_v p_v² = Σ_v exp(2·z_v) / (Σ_v exp(z_v))²``, so its log is ``logsumexp(2z) − 2·logsumexp(z)``:
    computed chunk by chunk in float32 like :func:`selective_log_softmax`. WPO's pair weights use it
    (:func:`trainwright.trainers.dpo.losses.wpo_pair_weights`).
    """
    pieces = []
    for chunk in logits.split(chunk_size):
        chunk = chunk.float()
        pieces.append(torch.logsumexp(2 * chunk, dim=-1) - 2 * torch.logsumexp(chunk, dim=-1))
    return torch.cat(pieces)


# ---------------------------------------------------------------------------------------------------
# shared-prefix forward
# ---------------------------------------------------------------------------------------------------
class SharedPrefix(NamedTuple):
    """Rows of a batch whose first ``length`` columns (tokens and attention mask) are identical.

    ``rows``: ``(U,)`` one representative row per distinct prefix; ``inverse``: ``(N,)`` for each row of
    the batch, the position in ``rows`` of its representative. GRPO's G completions of a prompt and
    DPO's chosen / rejected pair each share their prompt.
    """

    length: int
    rows: torch.Tensor
    inverse: torch.Tensor


def distinct_rows(*columns: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(rows, inverse)`` for the distinct rows of ``columns`` laid side by side (see :class:`SharedPrefix`).

    ``rows[u]`` is the first row holding distinct value ``u``; ``rows[inverse]`` maps every row to a
    row equal to it.
    """
    key = torch.cat(columns, dim=1)
    _, inverse = torch.unique(key, dim=0, return_inverse=True)
    n = key.shape[0]
    order = torch.arange(n, device=key.device)
    count = int(inverse.max()) + 1 if n else 0
    rows = torch.full((count,), n, dtype=torch.long, device=key.device)
    rows = rows.scatter_reduce(0, inverse, order, reduce="amin")
    return rows, inverse


def kv_cache_argument(model: nn.Module) -> str | None:
    """The forward argument that takes a KV cache (``cache`` in recent transformers, ``past_key_values``
    before), or ``None`` when :func:`shared_prefix_logits` cannot be used with ``model``.

    It can when the forward takes a cache and ``logits_to_keep``, and the model's ``DynamicCache``
    holds plain full-attention layers only (a sliding-window layer drops keys, a linear-attention one
    keeps a recurrent state). Not for PEFT prompt learning (prefix tuning feeds the cache itself).
    """
    config = getattr(model, "active_peft_config", None)
    if config is not None and getattr(config, "is_prompt_learning", False):
        return None
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # PEFT: the wrapped model
    try:
        parameters = inspect.signature(base.forward).parameters
    except (TypeError, ValueError):
        return None
    argument = next((name for name in ("cache", "past_key_values") if name in parameters), None)
    model_config = getattr(base, "config", None)
    if argument is None or "logits_to_keep" not in parameters or model_config is None:
        return None
    try:
        from transformers import DynamicCache

        layers = DynamicCache(config=model_config).layers
    except (AttributeError, KeyError, TypeError, ValueError):  # an unusual config: do not guess
        return None
    if not layers or any(type(layer).__name__ != "DynamicLayer" for layer in layers):
        return None
    return argument


#: What one extra model call costs, in the unit of what sharing saves: tokens run forward and backward
#: through the model body (every parameter but the input / output embeddings). Two parts:
#:
#: * a fixed part, CALL_OVERHEAD_PARAMETER_TOKENS / body parameters: every layer's ops dispatched once
#:   more, forward and backward; negligible from ~100M parameters on. Fitted on the small toy Qwen2
#:   (2.3M body parameters, one CPU core) by ``benchmarks/sharing_break_even.py``: GRPO's compute_loss +
#:   backward of 8 rows with 2 distinct prompts broke even at 66 saved tokens (1.5e8 parameter-tokens;
#:   42 saved: 6 % slower, 102 saved: 13 % faster), so the whole extra call, this part plus the weight
#:   gradients below (24 × 2.3M = 0.55e8), costs 1.5e8: this part is 1e8;
#: * WEIGHT_GRADIENT_TOKENS per body parameter: the call's backward builds its own gradient of each
#:   weight it uses (a fresh buffer, faulted in, written, then added into ``.grad``), memory-bound work.
#:   The value is an estimate, not a fitted one: ~16 bytes moved per parameter against 6 FLOPs per
#:   parameter-token of forward + backward matmul, at this CPU's ~10 GB/s and ~100 GFLOP/s with two
#:   threads. The issue-24 profile at 0.5B shows the effect (three calls against one: 1,595 vs 543
#:   ``aten::mm`` calls, ``fill_``/``zeros`` 2.8 s vs 1.0 s); ``benchmarks/real_size.py`` measures the result.
#:
#: An extra call that also projects onto the vocabulary adds the output embedding's gradient
#: (vocabulary × hidden) to the second part. The shared-prefix forward below keeps that out of the
#: prefix call (its logits are not used, so no LM-head backward) and embeds the tokens once for all
#: calls (one dense embedding gradient, as in the plain forward).
CALL_OVERHEAD_PARAMETER_TOKENS = 1e8
WEIGHT_GRADIENT_TOKENS = 24.0


class SharingCost(NamedTuple):
    """The cost of extra model calls for one model, in body tokens (see :data:`WEIGHT_GRADIENT_TOKENS`)."""

    per_call: float  # an extra call through the body (no LM-head gradient)
    per_head: float  # an extra LM-head weight gradient (a call that projects onto the vocabulary)
    per_forward: float  # an extra call without backward (generation's prefill): the fixed part only

    def pays(
        self, saved_tokens: float, extra_calls: int = 1, extra_heads: int = 0, backward: bool = True
    ) -> bool:
        """Whether not running ``saved_tokens`` body tokens pays for the extra calls and LM-head gradients
        (``backward=False``: calls without a backward, so without weight gradients)."""
        per_call = self.per_call if backward else self.per_forward
        return saved_tokens >= max(1.0, extra_calls * per_call + extra_heads * self.per_head)


def sharing_cost(model: nn.Module) -> SharingCost:
    """:class:`SharingCost` of ``model`` from its parameter counts (body, and input / output embeddings)."""
    inner = _unwrap(model)
    embeddings = {
        id(p)
        for getter in ("get_input_embeddings", "get_output_embeddings")
        for module in [_call_or_none(inner, getter)]
        if module is not None
        for p in module.parameters()
    }
    head = _call_or_none(inner, "get_output_embeddings")
    head_params = sum(p.numel() for p in head.parameters()) if head is not None else 0
    body = max(1, sum(p.numel() for p in inner.parameters() if id(p) not in embeddings))
    fixed = CALL_OVERHEAD_PARAMETER_TOKENS / body
    return SharingCost(fixed + WEIGHT_GRADIENT_TOKENS, WEIGHT_GRADIENT_TOKENS * head_params / body, fixed)


def _call_or_none(model: nn.Module, getter: str) -> nn.Module | None:
    try:
        module = getattr(model, getter)()
    except (AttributeError, NotImplementedError):
        return None
    return module if isinstance(module, nn.Module) else None


class PrefixSharing:
    """When to use the shared-prefix forward, per model; ``enabled=False`` turns it off.

    The trainers turn it off under FSDP and DeepSpeed (two forwards per step would gather the sharded
    parameters twice) and with gradient checkpointing (transformers drops the cache in training then).
    It is also off for a model that cannot reuse its cache (:func:`kv_cache_argument`, or a failed
    attempt, :meth:`disable`) and when the saving does not pay for the extra model call
    (:func:`sharing_cost`). What it learns about a model is kept (checking costs more than a small
    forward), keyed by the module the trainer calls, wrapped (DDP) or not.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        # model -> (its KV-cache argument or None, what an extra call costs)
        self._memo: weakref.WeakKeyDictionary[nn.Module, tuple[str | None, SharingCost]] = (
            weakref.WeakKeyDictionary()
        )

    def argument(
        self, model: nn.Module, saved_tokens: int | None = None, backward: bool = True
    ) -> str | None:
        """The KV-cache argument to share a prefix with ``model``, or ``None`` to run the plain forward.
        ``saved_tokens``: prefix tokens sharing would not compute, for one extra model call (with a
        backward unless ``backward=False``); ``None`` when not known yet (then weigh them with
        :meth:`cost` once they are)."""
        if not self.enabled:
            return None
        argument, cost = self._facts(model)
        if saved_tokens is not None and not cost.pays(saved_tokens, backward=backward):
            return None
        return argument

    def cost(self, model: nn.Module) -> SharingCost:
        """What an extra model call costs with ``model`` (:func:`sharing_cost`)."""
        return self._facts(model)[1]

    def min_saved_tokens(self, model: nn.Module) -> int:
        """The fewest saved prefix tokens for which one extra call pays off with ``model``."""
        return max(1, math.ceil(self.cost(model).per_call))

    def disable(self, model: nn.Module) -> None:
        """Never share with ``model`` again (its cache could not be reused)."""
        self._memo[model] = (None, self._facts(model)[1])

    def _facts(self, model: nn.Module) -> tuple[str | None, SharingCost]:
        if model not in self._memo:
            inner = _unwrap(model)
            sharded = any(getattr(m, "_is_fsdp_managed_module", False) for m in inner.modules())
            argument = None if sharded or _is_checkpointing(inner) else kv_cache_argument(inner)
            self._memo[model] = (argument, sharing_cost(inner))
        return self._memo[model]


def prefix_sharing_for(trainer: object) -> PrefixSharing:
    """The :class:`PrefixSharing` of a ``transformers.Trainer``: off under FSDP / DeepSpeed (each forward
    would gather the sharded parameters) and with gradient checkpointing (transformers drops the cache)."""
    sharded = getattr(trainer, "is_fsdp_enabled", False) or getattr(trainer, "is_deepspeed_enabled", False)
    args = getattr(trainer, "args", None)
    names = ("activation_checkpointing", "gradient_checkpointing")
    checkpointing = any(getattr(args, name, False) for name in names)
    return PrefixSharing(enabled=not (sharded or checkpointing))


def _is_checkpointing(model: nn.Module) -> bool:
    """Activation (gradient) checkpointing is on; transformers >= 5.24 renamed the property."""
    for name in ("is_activation_checkpointing", "is_gradient_checkpointing"):
        try:
            return bool(getattr(model, name))  # a PEFT model forwards the lookup to its base model
        except AttributeError:
            continue
    return False


def _unwrap(model: nn.Module) -> nn.Module:
    """The module inside DDP / DataParallel / ``torch.compile`` wrappers."""
    while True:
        if isinstance(model, (nn.parallel.DistributedDataParallel, nn.DataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod
        else:
            return model


class PrefixState(NamedTuple):
    """The shared prefixes run once: every layer's keys/values of their first ``k − 1`` columns.

    The last shared column is not cached: it is fed again with each row's continuation, whose first
    logit (position ``k − 1``) then predicts column ``k``. So the prefix call's logits are never used
    and its backward does not touch the LM head (no extra vocabulary × hidden weight gradient).
    """

    keys_values: list[tuple[torch.Tensor, torch.Tensor]]  # per layer, (U, kv_heads, k − 1, head_dim) each


def embed_tokens(
    model: nn.Module, input_ids: torch.Tensor, head: FusedHead | None = None
) -> torch.Tensor | None:
    """``model``'s input embeddings of ``input_ids``, ``(N, T, H)``; ``None`` if it exposes none.

    The shared-prefix forward feeds slices of this one tensor to its model calls, so the embedding's
    backward runs once (a dense vocabulary × hidden gradient per embedding call otherwise: 545 MB at
    Qwen2.5-0.5B's size), as in the plain forward. With ``head`` (the fused head of the calls), a tied
    embedding adds that gradient into the head's (:func:`~trainwright.trainers.common.lm_head.embed_ids`).
    """
    embeds = None if head is None else embed_ids(head, input_ids)
    if embeds is not None:
        return embeds
    module = _call_or_none(_unwrap(model), "get_input_embeddings")
    return None if module is None else module(input_ids)


def _tokens(
    input_ids: torch.Tensor, embeds: torch.Tensor | None, rows: Any, columns: slice
) -> dict[str, Any]:
    if embeds is None:
        return {"input_ids": input_ids[rows, columns]}
    return {"inputs_embeds": embeds[rows, columns]}


def run_shared_prefix(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    prefix: SharedPrefix,
    embeds: torch.Tensor | None = None,
) -> PrefixState | None:
    """Run the ``U`` distinct prefixes' first ``k − 1`` columns once with ``use_cache=True``; ``None``
    when there is nothing to cache (``k < 2``) or the model returned no reusable cache (then run the
    plain forward). ``embeds``: :func:`embed_tokens` of ``input_ids``, fed instead of the ids."""
    k = prefix.length - 1
    if k < 1:
        return None
    head = model(
        **_tokens(input_ids, embeds, prefix.rows, slice(None, k)),
        attention_mask=attention_mask[prefix.rows, :k],
        use_cache=True,
        logits_to_keep=1,  # unused: the first continuation column predicts column k + 1
    )
    cache = getattr(head, "cache", None)
    if cache is None:
        cache = getattr(head, "past_key_values", None)
    layers = getattr(cache, "layers", None)
    # Only plain full-attention layers holding this prefix: a sliding-window or linear-attention layer
    # keeps a transformed state, a KV-sharing layer none, and their reuse is not verified here.
    if not layers or any(
        type(layer).__name__ != "DynamicLayer"
        or getattr(layer, "keys", None) is None
        or layer.keys.shape[-2] != k
        for layer in layers
    ):
        return None
    return PrefixState([(layer.keys, layer.values) for layer in layers])


def continue_after_prefix(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    state: PrefixState,
    index: torch.Tensor | None,
    cache_argument: str,
    embeds: torch.Tensor | None = None,
    head: FusedHead | None = None,
) -> torch.Tensor | None:
    """Logits at positions ``k−1 … T−2`` of rows ``input_ids`` ``(n, T)`` whose first ``k`` columns are
    the prefixes of ``state`` rows ``index`` ``(n,)`` (``None``: row ``i`` is prefix ``i``): ``(n, T−k, V)``,
    or ``None`` when ``T ≤ k`` (no column after the prefix). ``embeds``: :func:`embed_tokens` of these
    rows, fed instead of the ids. With ``head`` (:func:`~trainwright.trainers.common.lm_head.fused_head` of
    ``model``) the final hidden states of those positions instead, ``(n, T−k, H)``, for the caller to
    score with :func:`~trainwright.trainers.common.lm_head.head_token_logps`."""
    from transformers import DynamicCache

    cached = state.keys_values[0][0].shape[-2]  # k − 1
    if input_ids.shape[1] <= cached + 1:
        return None
    # a cache of these rows' copies of the prefix keys/values (indexing is differentiable)
    layers = state.keys_values
    if index is not None:
        layers = [(keys[index], values[index]) for keys, values in state.keys_values]
    cache = DynamicCache(layers)
    kwargs = {
        **_tokens(input_ids, embeds, slice(None), slice(cached, -1)),
        "attention_mask": attention_mask[:, :-1],
        "use_cache": True,
        cache_argument: cache,
    }
    if head is not None:
        return backbone_hidden(head, 0, **kwargs)
    return model(**kwargs, logits_to_keep=0).logits


def shared_prefix_logits(
    model: nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    prefix: SharedPrefix,
    cache_argument: str,
    head: FusedHead | None = None,
) -> list[torch.Tensor] | None:
    """Logits at positions ``k−1 … T−2`` of every row (``k = prefix.length``), computing the shared
    prefix once per distinct row; ``None`` when the model's cache cannot be reused or the prefix is a
    single column (then run the plain forward).

    Two model calls instead of one over ``(N, T)``: the ``U`` distinct prefixes' first ``k − 1`` columns
    with ``use_cache=True``, then the ``(N, T−k)`` columns ``k−1 … T−2`` attending to the prefix
    keys/values, which are indexed out to the ``N`` rows. The tokens are embedded once for both calls
    (:func:`embed_tokens`) and the prefix call's logits are unused, so the extra call adds no embedding
    or LM-head gradient, only the body's weight gradients (:func:`sharing_cost`). Position ids
    (``cache_position``), the causal mask and the attention mask are those of the single forward, and
    indexing is differentiable (its backward sums the gradient of all rows sharing a prefix), so values
    and gradients equal the plain forward's up to float rounding. The last column is never fed: its
    logit would score a token after the sequence.

    Returns the logits as a list of column pieces (one here) for callers that score pieces in turn; with
    ``head``, the final hidden states of those positions (see :func:`continue_after_prefix`).
    """
    embeds = embed_tokens(model, input_ids, head)
    state = run_shared_prefix(model, input_ids, attention_mask, prefix, embeds)
    if state is None:
        return None
    tail = continue_after_prefix(
        model, input_ids, attention_mask, state, prefix.inverse, cache_argument, embeds, head
    )
    return None if tail is None else [tail]
