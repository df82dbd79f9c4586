"""A tiny tool-calling world, built offline: a ChatML tokenizer whose chat template renders tools, tool
calls and tool results, and a tiny causal LM *nudged* to emit tool calls.

Why a nudge: a randomly initialised model never writes ``<tool_call>{"name": ...}</tool_call>`` by chance,
so nothing about tool calling could be trained or compared. Here each whole tool call is one added token
(so one sampled token is one call), and :func:`nudge_transitions` sets the embeddings and LM head so the
next-token logits follow a small table keyed by the previous token (a bigram model riding on a real
transformer, whose attention layers still see the whole context and are trained as usual). Large logits
make rollouts deterministic (for parity tests against TRL); moderate ones leave a choice to learn (for
the calculator example).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from trainwright._extras import require_train_extra

require_train_extra("trainwright.toy_tools")

import torch
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2ForCausalLM

from trainwright.toy import DEFAULT_CORPUS, build_tiny_causal_lm

#: ChatML with tools: the schemas in a system turn, calls as ``<tool_call>`` JSON, results in ``tool`` turns.
TOOL_CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\nTools:{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}"
    "<|im_end|>\n{% endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'assistant' %}<|im_start|>assistant\n{{ message.content }}"
    "{%- for call in message.tool_calls or [] %}<tool_call>\n"
    '{{ {"name": call.function.name, "arguments": call.function.arguments} | tojson }}\n</tool_call>'
    "{%- endfor %}<|im_end|>\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

ASSISTANT_HEADER = "assistant\n"  # one added token: the last prompt token of every assistant turn


def tool_call_text(name: str, arguments: Mapping[str, object]) -> str:
    """The text :data:`TOOL_CHAT_TEMPLATE` renders for one call (the content of its added token)."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": dict(arguments)}) + "\n</tool_call>"


def build_tool_tokenizer(
    extra_tokens: Sequence[str] = (), corpus: Sequence[str] | None = None, vocab_size: int = 300
) -> PreTrainedTokenizerFast:
    """Byte-level BPE with ``<|im_end|>`` as EOS (the end of every turn, as in Qwen), ``assistant\\n`` and
    each of ``extra_tokens`` (tool calls, answers) as single added tokens, and :data:`TOOL_CHAT_TEMPLATE`."""
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|pad|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(list(corpus or DEFAULT_CORPUS), trainer=trainer)
    raw.add_tokens([AddedToken(text, normalized=False) for text in (ASSISTANT_HEADER, *extra_tokens)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="<|pad|>",
        eos_token="<|im_end|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.chat_template = TOOL_CHAT_TEMPLATE
    return tokenizer


def build_tool_model(
    tokenizer: PreTrainedTokenizerFast,
    transitions: Mapping[str, Mapping[str, float]],
    hidden_size: int = 64,
    seed: int = 0,
    axis_norm: float = 4.0,
) -> Qwen2ForCausalLM:
    """A tiny Qwen2 whose next-token logits after each token of ``transitions`` are nudged by the given
    amounts (``{previous token: {next token: logit}}``, tokens as text); see :func:`nudge_transitions`."""
    model = build_tiny_causal_lm(tokenizer, hidden_size=hidden_size, num_heads=4, seed=seed)
    model.config.max_position_embeddings = 4096  # tool schemas make long prompts with a byte-level vocabulary
    nudge_transitions(model, tokenizer, transitions, axis_norm)
    return model


@torch.no_grad()
def nudge_transitions(
    model: Qwen2ForCausalLM,
    tokenizer: PreTrainedTokenizerFast,
    transitions: Mapping[str, Mapping[str, float]],
    axis_norm: float = 4.0,
) -> None:
    """Give each previous token of ``transitions`` its own embedding axis (large, so it dominates the
    residual stream; a smaller ``axis_norm`` leaves more room for what attention brings from the context)
    and write the wanted logits into the LM head along that axis.

    After the final RMSNorm the hidden state of such a token is about ``√H`` along its axis, so an LM
    head entry ``logit / √H`` yields that logit; the random layers only perturb it slightly.
    """
    hidden = model.config.hidden_size
    if len(transitions) >= hidden:
        raise ValueError(
            f"{len(transitions)} nudged tokens need hidden_size > {len(transitions)}, got {hidden}"
        )
    embed, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    scale = hidden**0.5
    for axis, (previous, nexts) in enumerate(transitions.items()):
        prev_id = _single_id(tokenizer, previous)
        embed[prev_id] = 0.0
        embed[prev_id, axis] = axis_norm
        head[:, axis] = 0.0
        for token, logit in nexts.items():
            head[_single_id(tokenizer, token), axis] = logit / scale


def _single_id(tokenizer: PreTrainedTokenizerFast, text: str) -> int:
    ids = tokenizer.convert_tokens_to_ids([text])
    if ids[0] is None or ids[0] == tokenizer.unk_token_id:
        encoded = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(encoded) != 1:
            raise ValueError(f"{text!r} is not a single token of this tokenizer (it encodes to {encoded})")
        return encoded[0]
    return ids[0]
