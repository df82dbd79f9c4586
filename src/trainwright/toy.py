"""Tiny models and tokenizers built offline, for examples, tests and benchmarks.

Why this exists: nothing can be downloaded from a model hub on CI or on a laptop without network,
yet the trainers must be exercised on real ``transformers`` models. A 2-layer Qwen2 built from a
config and a byte-level BPE tokenizer trained in a few milliseconds on a small corpus give real
forward passes, real ``generate`` calls and real BPE merges (which matter for the DPO prompt /
completion boundary), all in seconds on one CPU core.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainwright._extras import require_train_extra

require_train_extra("trainwright.toy")

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

SPECIAL_TOKENS = ["<|pad|>", "<|eos|>", "<|im_start|>", "<|im_end|>"]

# A ChatML-style template, enough to exercise conversational data paths.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

DEFAULT_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A helpful assistant answers questions clearly and politely.",
    "Question: what is two plus two? Answer: four.",
    "Good answers are short, correct and kind. Bad answers are rude or wrong.",
    "user assistant system hello world thanks please yes no maybe",
    "0 1 2 3 4 5 6 7 8 9 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ .,!?:;'\"()-",
]


def build_tokenizer(
    corpus: Iterable[str] | None = None,
    vocab_size: int = 256,
    with_chat_template: bool = True,
) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer on ``corpus`` and wrap it as a ``PreTrainedTokenizerFast``.

    Byte-level BPE (as in GPT-2/Qwen) can encode any string, and its merges cross word boundaries,
    so ``tokenize(prompt + completion)`` need not start with ``tokenize(prompt)`` — the case that
    preference-data tokenisation must handle.
    """
    texts = list(corpus) if corpus is not None else list(DEFAULT_CORPUS)
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        # what a causal LM's tokenizer returns (GPT-2's, Llama's): no ``token_type_ids``, which
        # ``generate`` on 4.47-4.57 rejects for a model whose forward takes none
        model_input_names=["input_ids", "attention_mask"],
        pad_token="<|pad|>",
        eos_token="<|eos|>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    if with_chat_template:
        tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_causal_lm(
    tokenizer: PreTrainedTokenizerFast,
    hidden_size: int = 32,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    seed: int = 0,
    **config_overrides: Any,
) -> Qwen2ForCausalLM:
    """A randomly initialised Qwen2 causal LM sized for CPU tests (~20k parameters by default)."""
    torch.manual_seed(seed)
    config_overrides.setdefault("tie_word_embeddings", False)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or 2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        **config_overrides,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def save_tiny_model(path: str | Path, **kwargs: Any) -> Path:
    """Build a tokenizer and tiny model and save both to ``path`` (a local "hub" folder for loading tests)."""
    path = Path(path)
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, **kwargs)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
