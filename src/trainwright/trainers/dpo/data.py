"""Preference data: validation, tokenisation (once, with ``datasets.map``) and collation.

Accepted rows (one format per dataset):

* plain text: ``{"prompt": str, "chosen": str, "rejected": str}``; EOS is appended to both completions;
* conversations: ``{"prompt": [messages], "chosen": [messages], "rejected": [messages]}``, rendered
  with the tokenizer's chat template, with the row's ``chat_template_kwargs`` (a dict) and ``tools`` (a
  list, or its JSON) when it has them, as TRL;
* without a ``prompt`` column the prompt is *implicit*: the longest common prefix of ``chosen`` and
  ``rejected`` (messages for conversations, characters for text, where a space just before the first
  difference starts the completion);
* already tokenised: ``{"prompt_ids", "chosen_ids", "rejected_ids"}`` (lists of ints), used as is.

A ``datasets.IterableDataset`` (streaming) gets the same checks and tokenisation, lazily, row by row as
it is read (:func:`prepare_preference_dataset`).

**The completion boundary.** Tokenising ``prompt`` and ``prompt + completion`` separately does not give
a prefix: BPE merges across the boundary (``"Answer:" + " four"`` may tokenise ``":"`` with the space).
We tokenise the full text once, with character offsets, and count as prompt the leading tokens that
lie entirely inside the prompt's characters; the token that straddles the boundary belongs to the
completion. The trained sequence is thus exactly what the tokenizer produces for the full text, and
the chosen and rejected rows share the same prompt tokens (the longest common prefix of both).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from datasets import Dataset, IterableDataset
from transformers import PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

TEXT_COLUMNS = ("prompt", "chosen", "rejected")
TEMPLATE_COLUMNS = ("chat_template_kwargs", "tools")  # per-row apply_chat_template arguments
TOKEN_COLUMNS = ("prompt_ids", "chosen_ids", "rejected_ids")
REF_COLUMNS = ("ref_chosen_logps", "ref_rejected_logps")


def is_conversational(example: dict[str, Any]) -> bool:
    """True when ``chosen`` is a list of ``{"role", "content"}`` messages."""
    chosen = example.get("chosen")
    return isinstance(chosen, list) and bool(chosen) and isinstance(chosen[0], dict) and "role" in chosen[0]


def extract_implicit_prompt(example: dict[str, Any]) -> dict[str, Any]:
    """Split a row without a ``prompt`` into the shared prefix and the two replies (messages or text).

    Text splits at the first differing character, or just before a space that precedes it (so
    ``"Q: yes"`` / ``"Q: no"`` give the prompt ``"Q:"`` and the replies ``" yes"`` / ``" no"``, as TRL).
    """
    chosen, rejected = example["chosen"], example["rejected"]
    n = _common_prefix_length(chosen, rejected)
    what = "conversations" if isinstance(chosen, list) else "texts"
    if isinstance(chosen, str) and 0 < n < min(len(chosen), len(rejected)) and chosen[n - 1] == " ":
        n -= 1
    if n == 0:
        raise ValueError(
            f"implicit prompt: the chosen and rejected {what} share no common beginning, so there is no "
            "prompt to extract; add a 'prompt' column"
        )
    if n == len(chosen) or n == len(rejected):
        raise ValueError(
            f"implicit prompt: one of the {what} is a prefix of the other, leaving an empty reply"
        )
    return {"prompt": chosen[:n], "chosen": chosen[n:], "rejected": rejected[n:]}


def _common_prefix_length(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _tokenize_with_boundary(
    tokenizer: PreTrainedTokenizerBase, prompt_text: str, full_text: str, add_special_tokens: bool
) -> tuple[list[int], int]:
    """Tokenise ``full_text``; return its ids and how many leading tokens lie inside the prompt."""
    boundary = _common_prefix_length(prompt_text, full_text)
    if tokenizer.is_fast:
        encoding = tokenizer(full_text, add_special_tokens=add_special_tokens, return_offsets_mapping=True)
        n_prompt = 0
        for _, end in encoding["offset_mapping"]:
            if end > boundary:
                break
            n_prompt += 1
        return list(encoding["input_ids"]), n_prompt
    # Slow tokenizers have no offsets: fall back to where the two tokenisations diverge.
    ids = tokenizer(full_text, add_special_tokens=add_special_tokens)["input_ids"]
    prompt_ids = tokenizer(full_text[:boundary], add_special_tokens=add_special_tokens)["input_ids"]
    return list(ids), _common_prefix_length(prompt_ids, ids)


def tokenize_pair(
    example: dict[str, Any], tokenizer: PreTrainedTokenizerBase, conversational: bool
) -> dict[str, Any]:
    """One row to ``prompt_ids`` / ``chosen_ids`` / ``rejected_ids`` (see the module docstring)."""
    if conversational:
        template_kwargs = _chat_template_kwargs(example)
        prompt_text = tokenizer.apply_chat_template(
            example["prompt"], tokenize=False, add_generation_prompt=True, **template_kwargs
        )
        texts = [
            tokenizer.apply_chat_template(example["prompt"] + example[key], tokenize=False, **template_kwargs)
            for key in ("chosen", "rejected")
        ]
        add_special = False  # the template already holds every special token
    else:
        prompt_text = example["prompt"]
        texts = [prompt_text + example["chosen"], prompt_text + example["rejected"]]
        add_special = True
    (chosen_full, n_c), (rejected_full, n_r) = (
        _tokenize_with_boundary(tokenizer, prompt_text, text, add_special) for text in texts
    )
    n_prompt = min(n_c, n_r, _common_prefix_length(chosen_full, rejected_full))
    chosen_ids, rejected_ids = chosen_full[n_prompt:], rejected_full[n_prompt:]
    if not conversational and tokenizer.eos_token_id is not None:
        # Plain text has no end-of-turn marker: without EOS the model never learns to stop.
        eos = tokenizer.eos_token_id
        chosen_ids = chosen_ids if chosen_ids[-1:] == [eos] else chosen_ids + [eos]
        rejected_ids = rejected_ids if rejected_ids[-1:] == [eos] else rejected_ids + [eos]
    return {"prompt_ids": chosen_full[:n_prompt], "chosen_ids": chosen_ids, "rejected_ids": rejected_ids}


def _chat_template_kwargs(example: dict[str, Any]) -> dict[str, Any]:
    """The row's own ``apply_chat_template`` arguments: ``tools`` (JSON text is decoded) and the entries of
    ``chat_template_kwargs`` (TRL's per-row columns)."""
    kwargs: dict[str, Any] = {}
    tools = example.get("tools")
    if tools is not None:
        kwargs["tools"] = json.loads(tools) if isinstance(tools, str) else tools
    extra = example.get("chat_template_kwargs")
    if extra:
        if not isinstance(extra, dict):
            raise TypeError(
                f"column 'chat_template_kwargs' must hold a dict of apply_chat_template arguments per row, got "
                f"{type(extra).__name__} ({extra!r:.60})"
            )
        kwargs.update(extra)
    return kwargs


def _is_messages(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def check_row(example: dict[str, Any], index: int, conversational: bool, name: str) -> None:
    """Raise naming the row, the column and what it holds when a value cannot be tokenised.

    The format of the whole dataset is read from its first row, so a later row of the other format (or a
    ``None``) would otherwise fail deep inside tokenisation (``TypeError: can only concatenate str``).
    An empty prompt is refused too: the first completion token would have nothing to be predicted from.
    """
    for column in TEXT_COLUMNS:
        if column not in example:
            continue
        value = example[column]
        if conversational:
            good = _is_messages(value)
            expected = (
                "conversational preference data (its first row is) needs a non-empty list of "
                "{'role': ..., 'content': ...} messages in 'prompt', 'chosen' and 'rejected'"
            )
        else:
            good = isinstance(value, str)
            expected = (
                "plain-text preference data (its first row is) needs a string in 'prompt', 'chosen' and "
                "'rejected'"
            )
        if not good:
            error = ValueError if isinstance(value, (str, list)) else TypeError
            raise error(
                f"{name} dataset row {index}: column {column!r} holds {type(value).__name__} ({value!r:.60}); "
                f"{expected}"
            )
    _check_tools(example.get("tools"), f"{name} dataset row {index}")
    if not conversational and example.get("prompt") == "":
        raise ValueError(
            f"{name} dataset row {index}: column 'prompt' is an empty string; DPO scores each completion "
            f"given its prompt, so give every row a non-empty prompt"
        )


def _check_tools(tools: Any, where: str) -> None:
    """A ``tools`` cell given as text must be JSON (it is decoded for the chat template): name the row,
    the line and column, and show the text there, instead of a bare ``JSONDecodeError``."""
    if not isinstance(tools, str):
        return
    try:
        json.loads(tools)
    except json.JSONDecodeError as error:
        around = tools[max(0, error.pos - 20) : error.pos + 20]
        raise ValueError(
            f"{where}: column 'tools' is not valid JSON ({error.msg}: line {error.lineno} column {error.colno}, "
            f"near {around!r}); give a JSON list of tool schemas, or the list itself"
        ) from None


def _checked_tokenize(
    example: dict[str, Any], index: int, tokenizer: PreTrainedTokenizerBase, conversational: bool, name: str
) -> dict[str, Any]:
    check_row(example, index, conversational, name)
    return tokenize_pair(example, tokenizer, conversational)


def _checked_implicit_prompt(
    example: dict[str, Any], index: int, conversational: bool, name: str
) -> dict[str, Any]:
    check_row(example, index, conversational, name)
    return extract_implicit_prompt(example)


def _first_row(dataset: Dataset | IterableDataset, name: str) -> dict[str, Any]:
    """The first row (read from the stream for an ``IterableDataset``); raise when there is none."""
    if not isinstance(dataset, (Dataset, IterableDataset)):
        raise TypeError(
            f"{name} dataset must be a datasets.Dataset or datasets.IterableDataset, got {type(dataset).__name__}; "
            "build one with datasets.Dataset.from_list or datasets.IterableDataset.from_generator"
        )
    if isinstance(dataset, Dataset):
        first = dataset[0] if len(dataset) else None
    else:
        first = next(iter(dataset), None)
    if first is None:
        raise ValueError(f"{name} dataset is empty: it needs at least one prompt/chosen/rejected row")
    return first


def _check_columns(dataset: Dataset | IterableDataset, name: str) -> str:
    """Return the dataset's format ("tokenized", "text" or "conversational"); raise on bad input."""
    first = _first_row(dataset, name)
    columns = set(first)
    if set(TOKEN_COLUMNS) <= columns:
        return "tokenized"
    missing = [c for c in ("chosen", "rejected") if c not in columns]
    if missing:
        raise ValueError(
            f"{name} dataset is missing column(s) {missing}; found {sorted(columns)}. A preference dataset needs "
            f"'prompt', 'chosen' and 'rejected' (text or conversations), or {list(TOKEN_COLUMNS)}"
        )
    return "conversational" if is_conversational(first) else "text"


def prepare_preference_dataset(
    dataset: Dataset | IterableDataset,
    tokenizer: PreTrainedTokenizerBase,
    *,
    max_length: int | None,
    truncation_mode: str,
    num_proc: int | None = None,
    name: str = "train",
) -> Dataset | IterableDataset:
    """Validate, tokenise (cached by ``datasets`` fingerprint) and filter a preference dataset.

    An ``IterableDataset`` goes through the same row functions lazily, as its rows are read (``datasets``
    has no ``num_proc`` / ``desc`` for streams, and how many rows the filter drops is unknown until the
    stream is read, so there is no counting warning).
    """
    kind = _check_columns(dataset, name)
    streamed = isinstance(dataset, IterableDataset)

    def options(desc: str) -> dict[str, Any]:
        return {} if streamed else {"num_proc": num_proc, "desc": desc}

    if kind != "tokenized":
        conversational = kind == "conversational"
        if conversational and tokenizer.chat_template is None:
            raise ValueError(
                f"{name} dataset is conversational (lists of messages) but the tokenizer has no chat_template; "
                "set tokenizer.chat_template to a Jinja template, or pass plain-text prompt/chosen/rejected"
            )
        if "prompt" not in _first_row(dataset, name):
            dataset = dataset.map(
                _checked_implicit_prompt,
                fn_kwargs={"conversational": conversational, "name": name},
                with_indices=True,
                **options(f"Extracting {name} prompts"),
            )
        columns = set(_first_row(dataset, name))
        dataset = dataset.map(
            _checked_tokenize,
            fn_kwargs={"tokenizer": tokenizer, "conversational": conversational, "name": name},
            with_indices=True,
            remove_columns=[c for c in (*TEXT_COLUMNS, *TEMPLATE_COLUMNS) if c in columns],
            **options(f"Tokenizing {name} dataset"),
        )
    if max_length is None or truncation_mode != "keep_start":
        return dataset
    # keep_start truncation of a prompt with >= max_length tokens leaves no completion token: no signal.
    before = None if streamed else len(dataset)
    dataset = dataset.filter(
        lambda prompts: [len(ids) < max_length for ids in prompts],
        input_columns="prompt_ids",
        batched=True,
        **options(f"Dropping {name} prompts without room for a completion"),
    )
    if before is not None:
        _report_dropped(name, before, len(dataset), max_length)
    return dataset


def _report_dropped(name: str, before: int, after: int, max_length: int) -> None:
    """One warning counting the rows the ``max_length`` filter dropped; an error when none is left."""
    if before > after:
        logger.warning(
            "%s dataset: dropped %d of %d examples whose prompt alone has >= max_length=%d tokens (no room for "
            "the completion); raise max_length or shorten those prompts",
            name,
            before - after,
            before,
            max_length,
        )
    if after == 0:
        raise ValueError(
            f"{name} dataset is empty after dropping prompts longer than max_length={max_length}"
        )


def ld_token_weights(completion_rows: list[list[int]], pairs: int, alpha: float) -> list[list[float]]:
    """LD-DPO per-token weights of the ``2·pairs`` rows (chosen rows first, then rejected).

    Liu et al. 2024, "Length Desensitization in Direct Preference Optimization", arXiv:2409.06411, Eq. 9:
    with ``ℓ = min(|y_c|, |y_r|)`` the pair's shorter completion, ``log π(y) = Σ_{t ≤ ℓ} log p_t + α·Σ_{t > ℓ}
    log p_t``, so the verbose tail of the longer answer counts with weight α. Tokens are counted as they are
    scored (a row's first token never is, since no position predicts it), as TRL.
    """
    scored = [sum(row[1:]) for row in completion_rows]
    weights = []
    for i, row in enumerate(completion_rows):
        shared = min(scored[i % pairs], scored[pairs + i % pairs])
        seen, out = 0, [0.0]
        for flag in row[1:]:
            seen += flag
            out.append(0.0 if not flag else 1.0 if seen <= shared else alpha)
        weights.append(out[: len(row)])
    return weights


def _pad(rows: Sequence[Sequence[float]], value: float, dtype: torch.dtype = torch.long) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows], dtype=dtype)


@dataclass
class PreferenceCollator:
    """Stack ``[prompt+chosen ...; prompt+rejected ...]`` (2B rows), truncate, right-pad.

    Returns ``input_ids``, ``attention_mask``, ``completion_mask`` (1 on completion tokens) and, when
    the rows carry them, ``ref_chosen_logps`` / ``ref_rejected_logps``. Truncation happens here, per
    sequence, so it never allocates more than ``max_length`` columns.

    With ``padding_free`` the 2B sequences are instead concatenated into one row, shape ``(1, L)`` with
    ``L`` the number of real tokens: ``input_ids``, ``completion_mask``, ``position_ids`` (restarting at
    0 for every sequence, which is how transformers recognises packed sequences and keeps their
    attention apart), ``sequence_index`` (which of the 2B sequences each token belongs to) and
    ``sequence_lengths`` (2B,). No ``attention_mask``: transformers only detects packing without one.

    With ``ld_alpha`` (LD-DPO) the batch also holds ``logp_weights``, laid out like ``completion_mask``
    (:func:`ld_token_weights`, computed after truncation).
    """

    pad_token_id: int
    max_length: int | None = None
    truncation_mode: str = "keep_start"
    padding_free: bool = False
    ld_alpha: float | None = None

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        ids: list[list[int]] = []
        masks: list[list[int]] = []
        for key in ("chosen_ids", "rejected_ids"):
            for ex in examples:
                ids.append(list(ex["prompt_ids"]) + list(ex[key]))
                masks.append([0] * len(ex["prompt_ids"]) + [1] * len(ex[key]))
        if self.max_length is not None:
            cut = (
                slice(None, self.max_length)
                if self.truncation_mode == "keep_start"
                else slice(-self.max_length, None)
            )
            ids = [row[cut] for row in ids]
            masks = [row[cut] for row in masks]
        batch = self._packed(ids, masks) if self.padding_free else self._padded(ids, masks)
        if self.ld_alpha is not None:
            weights = ld_token_weights(masks, len(examples), self.ld_alpha)
            batch["logp_weights"] = (
                torch.tensor([[w for row in weights for w in row]])
                if self.padding_free
                else _pad(weights, 0.0, torch.float32)
            )
        for key in REF_COLUMNS:
            if key in examples[0]:
                batch[key] = torch.tensor([float(ex[key]) for ex in examples])
        return batch

    def _padded(self, ids: list[list[int]], masks: list[list[int]]) -> dict[str, torch.Tensor]:
        return {
            "input_ids": _pad(ids, self.pad_token_id),
            "attention_mask": _pad([[1] * len(row) for row in ids], 0),
            "completion_mask": _pad(masks, 0),
        }

    @staticmethod
    def _packed(ids: list[list[int]], masks: list[list[int]]) -> dict[str, torch.Tensor]:
        return {
            "input_ids": torch.tensor([[t for row in ids for t in row]], dtype=torch.long),
            "completion_mask": torch.tensor([[m for row in masks for m in row]], dtype=torch.long),
            "position_ids": torch.tensor([[p for row in ids for p in range(len(row))]], dtype=torch.long),
            "sequence_index": torch.tensor([[i for i, row in enumerate(ids) for _ in row]], dtype=torch.long),
            "sequence_lengths": torch.tensor([len(row) for row in ids], dtype=torch.long),
        }
