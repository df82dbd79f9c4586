"""Tokenisation, the prompt/completion boundary, truncation, collation and bad-input errors."""

from __future__ import annotations

import pytest
import torch
from conftest import text_pairs
from datasets import Dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainwright.toy import build_tokenizer
from trainwright.trainers.dpo.data import (
    PreferenceCollator,
    ld_token_weights,
    prepare_preference_dataset,
    tokenize_pair,
)


def prepare(ds, tok, max_length=64, mode="keep_start"):
    return prepare_preference_dataset(ds, tok, max_length=max_length, truncation_mode=mode)


@pytest.fixture(scope="module")
def merging_tokenizer():
    """A tokenizer with real merges, so that 'ye' + 's' tokenises as one token 'Ġyes'."""
    return build_tokenizer(["say yes yes yes to the yes", "yes you say yes"] * 20, vocab_size=300)


def test_dpo_plain_text_appends_eos_and_splits_at_prompt(tokenizer) -> None:
    row = tokenize_pair({"prompt": "Question: is it?", "chosen": " yes", "rejected": " no"}, tokenizer, False)
    assert tokenizer.decode(row["prompt_ids"]) == "Question: is it?"
    assert (
        row["chosen_ids"][-1] == tokenizer.eos_token_id and row["rejected_ids"][-1] == tokenizer.eos_token_id
    )
    assert tokenizer.decode(row["chosen_ids"][:-1]) == " yes"
    assert tokenizer.decode(row["rejected_ids"][:-1]) == " no"


def test_dpo_eos_not_doubled_when_already_present(tokenizer) -> None:
    row = tokenize_pair({"prompt": "Q?", "chosen": " yes<|eos|>", "rejected": " no"}, tokenizer, False)
    assert row["chosen_ids"].count(tokenizer.eos_token_id) == 1


def test_dpo_boundary_survives_bpe_merge_across_it(merging_tokenizer) -> None:
    tok = merging_tokenizer
    prompt, chosen = "say ye", "s"
    full_ids = tok(prompt + chosen)["input_ids"]
    alone_ids = tok(prompt)["input_ids"]
    assert full_ids[: len(alone_ids)] != alone_ids, "test premise: the prompt's last token merges with 's'"
    row = tokenize_pair({"prompt": prompt, "chosen": chosen, "rejected": " no"}, tok, False)
    # the trained sequence is exactly the tokenisation of the full text, and the merged token is completion
    assert row["prompt_ids"] + row["chosen_ids"] == full_ids + [tok.eos_token_id]
    assert tok.decode(row["prompt_ids"]) == "say"
    assert tok.decode(row["chosen_ids"][:1]) == " yes"
    # the rejected row shares exactly the same prompt tokens
    assert tok(prompt + " no")["input_ids"][: len(row["prompt_ids"])] == row["prompt_ids"]


def test_dpo_conversational_uses_chat_template(tokenizer) -> None:
    example = {
        "prompt": [{"role": "user", "content": "Is it good?"}],
        "chosen": [{"role": "assistant", "content": "yes"}],
        "rejected": [{"role": "assistant", "content": "no"}],
    }
    row = tokenize_pair(example, tokenizer, True)
    assert (
        tokenizer.decode(row["prompt_ids"])
        == "<|im_start|>user\nIs it good?<|im_end|>\n<|im_start|>assistant\n"
    )
    assert tokenizer.decode(row["chosen_ids"]) == "yes<|im_end|>\n"
    assert tokenizer.decode(row["rejected_ids"]) == "no<|im_end|>\n"


def test_dpo_implicit_prompt_is_common_message_prefix(tokenizer) -> None:
    user = {"role": "user", "content": "Is it good?"}
    ds = Dataset.from_list(
        [
            {
                "chosen": [user, {"role": "assistant", "content": "yes"}],
                "rejected": [user, {"role": "assistant", "content": "no"}],
            }
        ]
    )
    out = prepare(ds, tokenizer)
    assert tokenizer.decode(out[0]["prompt_ids"]).endswith("<|im_start|>assistant\n")
    assert tokenizer.decode(out[0]["chosen_ids"]) == "yes<|im_end|>\n"


def test_dpo_pretokenised_input_is_used_as_is(tokenizer) -> None:
    ds = Dataset.from_list([{"prompt_ids": [5, 6, 7], "chosen_ids": [8, 1], "rejected_ids": [9, 9, 1]}])
    out = prepare(ds, tokenizer)
    assert out[0] == {"prompt_ids": [5, 6, 7], "chosen_ids": [8, 1], "rejected_ids": [9, 9, 1]}


def test_dpo_drops_prompts_without_room_with_one_counting_warning(tokenizer, caplog) -> None:
    rows = [{"prompt": "short", "chosen": " a", "rejected": " b"}] * 3 + [
        {"prompt": "x" * 40, "chosen": " a", "rejected": " b"}
    ] * 2
    with caplog.at_level("WARNING", logger="trainwright"):
        out = prepare(Dataset.from_list(rows), tokenizer, max_length=20)
    dropped = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1 and "dropped 2 of 5 examples" in dropped[0].getMessage()
    assert dropped[0].name.startswith("trainwright.")
    assert len(out) == 3
    # keep_end keeps the completion's end: nothing is dropped
    assert len(prepare(Dataset.from_list(rows), tokenizer, max_length=20, mode="keep_end")) == 5


def test_dpo_collator_stacks_truncates_and_masks() -> None:
    examples = [
        {"prompt_ids": [1, 2, 3], "chosen_ids": [4, 5], "rejected_ids": [6]},
        {"prompt_ids": [7, 8], "chosen_ids": [9], "rejected_ids": [10, 11, 12]},
    ]
    batch = PreferenceCollator(pad_token_id=0)(examples)
    assert batch["input_ids"].tolist() == [
        [1, 2, 3, 4, 5],
        [7, 8, 9, 0, 0],
        [1, 2, 3, 6, 0],
        [7, 8, 10, 11, 12],
    ]
    assert batch["completion_mask"].tolist() == [
        [0, 0, 0, 1, 1],
        [0, 0, 1, 0, 0],
        [0, 0, 0, 1, 0],
        [0, 0, 1, 1, 1],
    ]
    assert batch["attention_mask"].tolist() == [[1] * 5, [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1] * 5]
    start = PreferenceCollator(pad_token_id=0, max_length=3)(examples)
    assert start["input_ids"].tolist() == [[1, 2, 3], [7, 8, 9], [1, 2, 3], [7, 8, 10]]
    end = PreferenceCollator(pad_token_id=0, max_length=3, truncation_mode="keep_end")(examples)
    assert end["input_ids"].tolist() == [[3, 4, 5], [7, 8, 9], [2, 3, 6], [10, 11, 12]]
    assert end["completion_mask"].tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 1], [1, 1, 1]]


def test_dpo_collator_passes_reference_logps() -> None:
    examples = [
        {
            "prompt_ids": [1],
            "chosen_ids": [2],
            "rejected_ids": [3],
            "ref_chosen_logps": -1.5,
            "ref_rejected_logps": -2.5,
        }
    ]
    batch = PreferenceCollator(pad_token_id=0)(examples)
    assert torch.equal(batch["ref_chosen_logps"], torch.tensor([-1.5]))
    assert torch.equal(batch["ref_rejected_logps"], torch.tensor([-2.5]))


# ---- bad input -----------------------------------------------------------------------------------


def test_dpo_error_missing_columns(tokenizer) -> None:
    ds = Dataset.from_list([{"prompt": "p", "chosen": "a", "answer": "b"}])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['rejected'\]"):
        prepare(ds, tokenizer)
    ds = Dataset.from_list([{"chosen": "a", "rejected": "b"}])  # no prompt, and no common beginning either
    with pytest.raises(ValueError, match="share no common beginning.*add a 'prompt' column"):
        prepare(ds, tokenizer)


def test_dpo_text_implicit_prompt_is_the_common_prefix_before_its_space(tokenizer) -> None:
    """TRL's split of plain-text rows without a prompt: the space before the first difference starts the
    completion, so the result tokenises exactly like the explicit row."""
    implicit = Dataset.from_list([{"chosen": "Is it good? yes", "rejected": "Is it good? no"}])
    explicit = Dataset.from_list([{"prompt": "Is it good?", "chosen": " yes", "rejected": " no"}])
    assert prepare(implicit, tokenizer)[0] == prepare(explicit, tokenizer)[0]
    with pytest.raises(ValueError, match="is a prefix of the other"):
        prepare(Dataset.from_list([{"chosen": "Is it good? yes", "rejected": "Is it good? yes!"}]), tokenizer)


def test_dpo_error_empty_dataset(tokenizer) -> None:
    empty = text_pairs(2).select([])
    with pytest.raises(ValueError, match="train dataset is empty"):
        prepare(empty, tokenizer)


def test_dpo_error_no_chat_template_for_conversations() -> None:
    tok = build_tokenizer(with_chat_template=False)
    ds = Dataset.from_list(
        [
            {
                "prompt": [{"role": "user", "content": "hi"}],
                "chosen": [{"role": "assistant", "content": "a"}],
                "rejected": [{"role": "assistant", "content": "b"}],
            }
        ]
    )
    with pytest.raises(ValueError, match="conversational .* no chat_template"):
        prepare(ds, tok)


def test_dpo_streamed_dataset_tokenises_like_the_map_style_one(tokenizer) -> None:
    rows = text_pairs(3)
    streamed = prepare(rows.to_iterable_dataset(), tokenizer)
    assert list(streamed) == list(prepare(rows, tokenizer))
    with pytest.raises(TypeError, match="must be a datasets.Dataset or datasets.IterableDataset"):
        prepare(rows.to_list(), tokenizer)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prompt=st.text(alphabet="say yes you to the ", min_size=1, max_size=12),
    chosen=st.text(alphabet="say yes you to the ", min_size=1, max_size=8),
    rejected=st.text(alphabet="say yes you to the ", min_size=1, max_size=8),
)
def test_dpo_boundary_property(merging_tokenizer, prompt, chosen, rejected) -> None:
    """Whatever merges happen: each row is the full text's tokenisation (+EOS), the prompt part decodes
    to a prefix of the prompt, and chosen/rejected share the prompt tokens."""
    tok = merging_tokenizer
    row = tokenize_pair({"prompt": prompt, "chosen": chosen, "rejected": rejected}, tok, False)
    eos = [tok.eos_token_id]
    assert row["prompt_ids"] + row["chosen_ids"] == tok(prompt + chosen)["input_ids"] + eos
    assert row["prompt_ids"] + row["rejected_ids"] == tok(prompt + rejected)["input_ids"] + eos
    assert prompt.startswith(tok.decode(row["prompt_ids"]))
    assert len(row["chosen_ids"]) >= 2 and len(row["rejected_ids"]) >= 2  # at least one real token + EOS


def test_dpo_ld_token_weights_by_hand() -> None:
    """LD-DPO weights: 1 up to the pair's shorter scored completion, α past it, 0 off the completion; a row's
    first token is never scored, so it is not counted (here the rejected row of pair 1 starts with one)."""
    masks = [
        [0, 0, 1, 1, 1],  # chosen 0: 3 scored completion tokens
        [0, 1, 1],  # chosen 1: 2
        [0, 0, 1],  # rejected 0: 1  -> pair 0 shares 1 token
        [1, 1, 1, 1],  # rejected 1: 3 scored (its first token is not) -> pair 1 shares 2
    ]
    assert ld_token_weights(masks, 2, 0.25) == [
        [0.0, 0.0, 1.0, 0.25, 0.25],
        [0.0, 1.0, 1.0],
        [0.0, 0.0, 1.0],
        [0.0, 1.0, 1.0, 0.25],
    ]
    batch = PreferenceCollator(pad_token_id=0, ld_alpha=0.5)(
        [{"prompt_ids": [1], "chosen_ids": [2, 3, 4], "rejected_ids": [5]}]
    )
    assert batch["logp_weights"].tolist() == [[0.0, 1.0, 0.5, 0.5], [0.0, 1.0, 0.0, 0.0]]


def test_dpo_tools_column_of_invalid_json_names_row_line_and_column(tokenizer) -> None:
    """Issue 38 item 16: a ``tools`` cell that is not JSON was a bare ``JSONDecodeError``."""
    good = '[{"type": "function", "function": {"name": "add", "parameters": {}}}]'
    message = [{"role": "user", "content": "Is it good?"}]
    rows = [
        {"prompt": message, "chosen": [{"role": "assistant", "content": "yes"}],
         "rejected": [{"role": "assistant", "content": "no"}], "tools": tools}
        for tools in (good, good, '[{"type": "function",\n  "function": {name: "add"}}]')
    ]  # fmt: skip
    with pytest.raises(ValueError) as error:
        prepare(Dataset.from_list(rows), tokenizer)
    text = str(error.value)
    assert "train dataset row 2: column 'tools' is not valid JSON" in text
    assert "line 2 column 16" in text and "{name" in text  # where, and the text around it
