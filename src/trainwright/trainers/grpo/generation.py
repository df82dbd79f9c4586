"""The generation-backend interface of ``GRPOTrainer`` and its ``model.generate`` implementation.

Why an interface: generation dominates GRPO's cost, and serving engines (vLLM, SGLang) are much faster
than ``model.generate`` on GPUs. The trainer only needs "token ids of prompts in, token ids of
completions out", so a backend is anything with :meth:`GenerationBackend.generate`; a vLLM backend
would add a ``sync_weights(model)`` call before each round (not included: vLLM is an optional extra
that cannot run on CPU). Under FSDP2 the backend receives the sharded policy; the built-in one gathers it
for the call (:func:`~trainwright.trainers.common.distributed.gathered_for_generation`), and so can another.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from torch import nn
from transformers import GenerationConfig

from trainwright.trainers.common.distributed import gathered_for_generation
from trainwright.trainers.common.logprobs import PrefixSharing, distinct_rows
from trainwright.trainers.grpo.kv_cache import preallocated_cache


@dataclass
class SamplingSettings:
    """Sampling knobs shared by every backend (``extra`` overrides them, backend-specific)."""

    max_completion_length: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float | None = None
    repetition_penalty: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


class GenerationBackend(Protocol):
    """Turns prompts (lists of token ids) into completions (lists of token ids, cut after the first EOS)."""

    def generate(self, model: nn.Module, prompt_ids: list[list[int]]) -> list[list[int]]:
        """One call per generation round; ``prompt_ids`` holds every completion's prompt (G copies each)."""
        ...


class TransformersGenerateBackend:
    """``model.generate`` with left-padded prompts and sampling.

    Prompts are left-padded by hand (not through the tokenizer's ``padding_side``, which the toy
    tokenizer sets to "right") so that every prompt's last token sits at the same position and new
    tokens are appended right after it.

    The G copies of a prompt are prefilled once (:meth:`prefilled_cache`): a round's prompt tokens
    run through the model once per distinct prompt instead of G times, and decoding starts from their
    keys/values copied out to the G rows, in buffers sized for the whole generation
    (:mod:`trainwright.trainers.grpo.kv_cache`: no copy of the cache per new token). The sampled tokens are
    those of the plain call up to float rounding (the same random draws, from the same logits).
    """

    def __init__(self, settings: SamplingSettings, pad_token_id: int, eos_token_ids: list[int]) -> None:
        self.settings = settings
        self.pad_token_id = pad_token_id
        self.eos_token_ids = sorted(set(eos_token_ids))
        self.calls = 0  # number of generate calls, for tests and benchmarks
        kwargs: dict[str, Any] = {
            "do_sample": True,
            "max_new_tokens": settings.max_completion_length,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "top_k": settings.top_k,
            "repetition_penalty": settings.repetition_penalty,
            "pad_token_id": pad_token_id,
            "eos_token_id": self.eos_token_ids,
        }
        if settings.min_p is not None:
            kwargs["min_p"] = settings.min_p
        kwargs.update(settings.extra)
        self.generation_config = GenerationConfig(**kwargs)
        # prefilling needs a dynamic cache of plain layers (kv_cache_argument) and generate's own cache
        enabled = self.generation_config.cache_implementation is None and "cache" not in settings.extra
        self.prompt_sharing = PrefixSharing(enabled=enabled)

    def generate(self, model: nn.Module, prompt_ids: list[list[int]]) -> list[list[int]]:
        if not prompt_ids:
            return []
        width = max(len(ids) for ids in prompt_ids)
        device = next(model.parameters()).device
        input_ids = torch.full((len(prompt_ids), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(prompt_ids), width), dtype=torch.long)
        for row, ids in enumerate(prompt_ids):
            if ids:
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention_mask[row, width - len(ids) :] = 1
        # The model samples in the mode it is in, as TRL's does: train mode (dropout on) in a training round,
        # eval mode during evaluation. An FSDP2-sharded policy is gathered once and decodes on local full
        # weights (no collective per token, so processes may stop at different lengths); see
        # trainwright.trainers.common.distributed.
        with torch.no_grad(), gathered_for_generation(model) as gathered:
            input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
            extra: dict[str, Any] = {"synced_gpus": False} if gathered else {}
            if not gathered:  # a gathered (FSDP) model: one call, as simple as possible
                extra.update(self.prefilled_cache(model, input_ids, attention_mask))
            output = model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                generation_config=self.generation_config,
                **extra,
            )
        self.calls += 1
        completions = []
        for row in output[:, width:].tolist():
            cut = []
            for token in row:
                cut.append(token)
                if token in self.eos_token_ids:
                    break
            completions.append(cut)
        return completions

    def prefilled_cache(
        self, model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> dict[str, Any]:
        """``generate`` keyword arguments holding the distinct prompts' keys/values of all but the last
        column, copied out to every row; ``{}`` when there is no repeated prompt, the saving does not
        pay for the extra call, or the model cannot take a prefilled cache (then ``generate`` prefills).

        ``generate`` then runs the last prompt column (whose logits give the first token) and decodes.
        """
        width = input_ids.shape[1]
        if width < 2:
            return {}
        rows, inverse = distinct_rows(input_ids, attention_mask)
        saved = (inverse.numel() - rows.numel()) * (width - 1)
        argument = self.prompt_sharing.argument(model, saved_tokens=saved, backward=False)
        if rows.numel() == inverse.numel() or argument is None:
            return {}
        out = model(
            input_ids=input_ids[rows, :-1],
            attention_mask=attention_mask[rows, :-1],
            use_cache=True,
            logits_to_keep=1,
        )
        cache = getattr(out, "cache", None)
        if cache is None:
            cache = getattr(out, "past_key_values", None)
        layers = getattr(cache, "layers", None)
        if not layers or any(
            type(layer).__name__ != "DynamicLayer" or getattr(layer, "keys", None) is None for layer in layers
        ):
            self.prompt_sharing.disable(model)
            return {}
        capacity = width + (self.generation_config.max_new_tokens or 0)  # the prompt and every new token
        keys_values = [(layer.keys[inverse], layer.values[inverse]) for layer in layers]
        return {argument: preallocated_cache(keys_values, capacity)}


def eos_token_ids(model: nn.Module, tokenizer: Any) -> list[int]:
    """Every id that ends a completion: the tokenizer's EOS and every EOS the model's generation config
    declares (an end-of-turn token, say), as TRL."""
    config_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    declared: Iterable[int | None] = config_eos if isinstance(config_eos, list) else [config_eos]
    return [i for i in dict.fromkeys([tokenizer.eos_token_id, *declared]) if i is not None]


def backend_from_config(
    args: Any, model: nn.Module, tokenizer: Any, pad_token_id: int
) -> TransformersGenerateBackend:
    """``model.generate`` with a ``GRPOConfig``'s sampling knobs, ``cache_implementation`` and
    ``generation_kwargs`` (which override the rest), padding with ``pad_token_id`` (the trainer's:
    the tokenizer may have no pad token of its own)."""
    extra: dict[str, Any] = {}
    if args.cache_implementation is not None:
        extra["cache_implementation"] = args.cache_implementation
    extra.update(args.generation_kwargs or {})
    settings = SamplingSettings(
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        min_p=args.min_p,
        repetition_penalty=args.repetition_penalty,
        extra=extra,
    )
    return TransformersGenerateBackend(
        settings, pad_token_id=pad_token_id, eos_token_ids=eos_token_ids(model, tokenizer)
    )
