"""The chat-template side of tool calling: can the template render a tool exchange, how a completion is
parsed into a message with ``tool_calls``, and which tokens carry a tool result back to the model.

Why token surgery instead of re-rendering the conversation: a completion's tokens must stay exactly the
sampled ones (their log-probs are what the loss reweights), so after a tool turn the next prompt is
``prompt + completion + suffix``, where the *suffix* is what the template renders for the tool messages
and the next assistant header. It is cut from two renderings of a small conversation, with and without
the tool messages, as TRL 1.16 does (which needs a template that renders earlier messages the same
whatever follows them; :func:`tool_suffix_ids` says so by name when that fails).

Parsing uses the tokenizer's own ``response_template`` (``tokenizer.parse_response``). A tokenizer with
none gets :data:`CHATML_TOOL_RESPONSE_TEMPLATE` when its chat template writes tool calls the ChatML /
Hermes way (``<tool_call>{json}</tool_call>`` inside ``<|im_start|>assistant`` turns, as Qwen's do);
any other template needs a ``response_template`` set by the user (:class:`ToolParsingError` says how).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

#: A ``transformers`` response template for ChatML-style tool calls (``<tool_call>`` JSON ``</tool_call>``).
CHATML_TOOL_RESPONSE_TEMPLATE: dict[str, Any] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<\|im_end\|>\s*", "content": "text"},
    },
}

_NAME, _KEY, _VALUE, _RESULT = "tw_tool_name_q7", "tw_arg_key_k3", "tw_arg_value_v5", "tw_tool_result_r9"


class ToolParsingError(ValueError):
    """The tokenizer cannot render or parse tool calls (the message says what to set)."""


def _sentinel_exchange() -> list[dict[str, Any]]:
    call = {"type": "function", "function": {"name": _NAME, "arguments": {_KEY: _VALUE}}}
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": _NAME, "content": _RESULT},
    ]


def render_tool_exchange(tokenizer: Any) -> str | None:
    """The chat template's text for a user → assistant tool call → tool result exchange, or ``None`` when
    the template cannot render it or drops a part of it (the call's name or arguments, or the result)."""
    if getattr(tokenizer, "chat_template", None) is None:
        return None
    try:
        text = tokenizer.apply_chat_template(_sentinel_exchange(), tokenize=False)
    except Exception:  # noqa: BLE001 - jinja errors (a template refusing the roles) share no base
        return None
    return text if all(s in text for s in (_NAME, _KEY, _VALUE, _RESULT)) else None


def prepare_tool_tokenizer(tokenizer: Any) -> None:
    """Check that ``tokenizer`` can take part in tool calling, giving it a response parser if it has none.

    Raises :class:`ToolParsingError` when the template cannot render a tool exchange (TRL's wording), or
    when no parser is set and the template is not of the ChatML / Hermes kind.
    """
    rendered = render_tool_exchange(tokenizer)
    if rendered is None:
        raise ToolParsingError(
            "The provided chat template does not support tool calling. The template must be able to render a "
            "full tool-calling conversation (user -> assistant with tool_calls -> tool)."
        )
    inner = getattr(tokenizer, "tokenizer", tokenizer)
    if getattr(inner, "response_template", None) is not None or getattr(inner, "response_schema", None):
        return
    if "<tool_call>" in rendered and "<|im_start|>assistant\n" in rendered:
        inner.response_template = copy.deepcopy(CHATML_TOOL_RESPONSE_TEMPLATE)
        return
    raise ToolParsingError(
        "the tokenizer has no response_template, so the model's tool calls cannot be parsed, and its chat "
        "template is not the ChatML <tool_call> kind trainwright can parse by itself; set "
        "tokenizer.response_template (see transformers' chat response parsing docs) before building the trainer"
    )


def parse_completion(
    tokenizer: Any, ids: list[int], prefix: list[int], tools: Sequence[Callable[..., Any]] | None
) -> dict[str, Any]:
    """One assistant message from completion ``ids`` (``tool_calls`` when the model made any).

    Like TRL: a completion that does not parse (a malformed call) becomes plain text content, the EOS
    text is stripped from the content, ``content`` is always a string, and a call without arguments gets
    ``{}``; a call whose name is not a string is malformed too.
    """
    inner = getattr(tokenizer, "tokenizer", tokenizer)
    try:
        if getattr(inner, "response_template", None) is not None:
            parsed = inner.parse_response(ids, prefix=prefix, tools=list(tools) if tools else None)
        else:
            parsed = inner.parse_response(ids)
        if parsed is None:
            raise ValueError("nothing parsed")
        if isinstance(parsed.get("content"), str) and inner.eos_token:
            parsed["content"] = parsed["content"].removesuffix(inner.eos_token)
        if not parsed.get("content"):
            parsed["content"] = ""
        if "tool_calls" in parsed:
            _normalise_calls(parsed["tool_calls"])
    except (ValueError, TypeError):
        parsed = {"role": "assistant", "content": inner.decode(ids, skip_special_tokens=True)}
    return parsed


def _normalise_calls(tool_calls: Any) -> None:
    """Raise ``ValueError`` for a call the chat template could not render; fill missing arguments with {}."""
    if tool_calls is None:
        return
    if not isinstance(tool_calls, list):
        raise ValueError("tool_calls must be a list")  # noqa: TRY004 - caught as a parse failure
    for call in tool_calls:
        if not isinstance(call, dict):
            raise ValueError("a tool call must be a dict")  # noqa: TRY004 - a parse failure
        function = call.get("function", call)
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError("a tool call needs a string name")  # noqa: TRY004 - a parse failure
        if function.get("arguments") is None:
            function["arguments"] = {}


def tool_suffix_ids(
    tokenizer: Any, tool_messages: list[dict[str, Any]], chat_template_kwargs: dict[str, Any]
) -> list[int]:
    """Token ids the template puts after an assistant turn that ends in EOS: the tool messages, then the
    next assistant header (TRL's rendering: a one-call dummy conversation with and without them)."""
    inner = getattr(tokenizer, "tokenizer", tokenizer)
    call = {"type": "function", "function": {"name": tool_messages[0]["name"], "arguments": {}}}
    dummy = [{"role": "user", "content": "dummy"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    prefix = _ids(
        tokenizer.apply_chat_template(
            dummy, add_generation_prompt=False, tokenize=True, **chat_template_kwargs
        )
    )
    full = _ids(
        tokenizer.apply_chat_template(
            dummy + tool_messages, add_generation_prompt=True, tokenize=True, **chat_template_kwargs
        )
    )
    ends = [i for i, token in enumerate(prefix) if token == inner.eos_token_id]
    if ends:
        prefix = prefix[: ends[-1] + 1]
    if full[: len(prefix)] != prefix:
        raise ToolParsingError(
            "the chat template renders an assistant turn differently once tool messages follow it, so the tool "
            "results cannot be appended to the sampled tokens; use a template that renders earlier messages the "
            "same whatever comes after them (a 'prefix-preserving' template)"
        )
    return full[len(prefix) :]


def _ids(encoded: Any) -> list[int]:
    """``apply_chat_template(tokenize=True)`` output as a flat list (a dict-like result holds ``input_ids``)."""
    if hasattr(encoded, "keys"):
        encoded = encoded["input_ids"]
    return list(encoded)
