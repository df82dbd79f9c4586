"""The shared-prefix forward (both trainers): same logits and gradients as one plain forward, and when it is used."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from trainwright.toy import build_tiny_causal_lm, build_tokenizer
from trainwright.trainers.common import logprobs
from trainwright.trainers.common.lm_head import fused_head, head_token_logps
from trainwright.trainers.common.logprobs import (
    PrefixSharing,
    SharedPrefix,
    distinct_rows,
    kv_cache_argument,
    shared_prefix_logits,
)


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def test_distinct_rows_maps_every_row_to_an_equal_one() -> None:
    ids = torch.tensor([[5, 6], [7, 8], [5, 6], [7, 8], [9, 9]])
    mask = torch.tensor([[1, 1], [1, 1], [1, 1], [0, 1], [1, 1]])  # row 3 differs from row 1 by its mask
    rows, inverse = distinct_rows(ids, mask)
    assert rows.numel() == 4
    assert torch.equal(ids[rows][inverse], ids) and torch.equal(mask[rows][inverse], mask)
    assert sorted(rows.tolist()) == [0, 1, 3, 4]  # the first row of each distinct value


def _batch():
    """Two prompts (the second left-padded), three completions each, some cut short by their mask."""
    gen = torch.Generator().manual_seed(0)
    p, c = 6, 5
    prompts = torch.randint(5, 200, (2, p), generator=gen)
    prompt_mask = torch.ones(2, p, dtype=torch.long)
    prompts[1, :2], prompt_mask[1, :2] = 0, 0
    prompt_ids, prompt_mask = prompts.repeat_interleave(3, 0), prompt_mask.repeat_interleave(3, 0)
    completion_ids = torch.randint(5, 200, (6, c), generator=gen)
    completion_mask = torch.ones(6, c, dtype=torch.long)
    completion_mask[0, 3:], completion_mask[4, 1:] = 0, 0
    return prompt_ids, prompt_mask, completion_ids, completion_mask


@pytest.mark.parametrize("training", [True, False])
def test_shared_prefix_logits_equal_one_plain_forward(tokenizer, training) -> None:
    model = build_tiny_causal_lm(tokenizer, seed=0)
    model.train(training)
    prompt_ids, prompt_mask, completion_ids, completion_mask = _batch()
    input_ids = torch.cat([prompt_ids, completion_ids], 1)
    attention_mask = torch.cat([prompt_mask, completion_mask], 1)
    rows, inverse = distinct_rows(prompt_ids, prompt_mask)
    argument = kv_cache_argument(model)
    assert argument is not None
    width = completion_ids.shape[1]

    plain = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=width + 1).logits[:, :-1]
    pieces = shared_prefix_logits(
        model, input_ids, attention_mask, SharedPrefix(prompt_ids.shape[1], rows, inverse), argument
    )
    shared = torch.cat(pieces, dim=1)
    torch.testing.assert_close(shared, plain, atol=1e-5, rtol=1e-5)

    def loss(logits):
        picked = logits.log_softmax(-1).gather(-1, completion_ids.unsqueeze(-1)).squeeze(-1)
        return (picked * completion_mask).sum()

    params = list(model.parameters())
    for a, b in zip(torch.autograd.grad(loss(plain), params), torch.autograd.grad(loss(shared), params)):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_kv_cache_argument_refuses_what_it_cannot_reuse(tokenizer) -> None:
    model = build_tiny_causal_lm(tokenizer, seed=0)
    assert kv_cache_argument(model) == "cache"
    model.config.layer_types = ["sliding_attention"] * len(model.config.layer_types)
    model.config.sliding_window = 4
    assert kv_cache_argument(model) is None  # a sliding-window layer drops keys

    class NoCache(torch.nn.Module):
        def forward(self, input_ids, attention_mask=None):
            return input_ids

    assert kv_cache_argument(NoCache()) is None


def test_prefix_sharing_skips_small_savings_checkpointing_and_failures(tokenizer, monkeypatch) -> None:
    small = build_tiny_causal_lm(tokenizer, seed=0, hidden_size=240, num_layers=4, num_heads=4)
    tiny = build_tiny_causal_lm(tokenizer, seed=0)
    sharing = PrefixSharing()
    # the fixed cost of the second model call outweighs a saving of a few tokens on a 37k-parameter model
    assert sharing.min_saved_tokens(tiny) > sharing.min_saved_tokens(small) > 1
    assert sharing.argument(small, saved_tokens=sharing.min_saved_tokens(small)) == "cache"
    assert sharing.argument(small, saved_tokens=sharing.min_saved_tokens(small) - 1) is None
    sharing.disable(small)
    assert sharing.argument(small) is None
    assert PrefixSharing(enabled=False).argument(tiny) is None

    checkpointed = build_tiny_causal_lm(tokenizer, seed=0)
    enable = getattr(checkpointed, "activation_checkpointing_enable", None)
    (enable or checkpointed.gradient_checkpointing_enable)()
    assert PrefixSharing().argument(checkpointed) is None
    monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0)
    monkeypatch.setattr(logprobs, "WEIGHT_GRADIENT_TOKENS", 0)
    assert PrefixSharing().min_saved_tokens(tiny) == 1


def test_sharing_cost_counts_the_body_and_the_extra_gradients(tokenizer) -> None:
    """An extra call costs its fixed dispatch plus its own weight gradients of the body; a call with a
    backward costs more than one without, and an extra LM-head gradient adds vocabulary × hidden."""
    model = build_tiny_causal_lm(tokenizer, seed=0, hidden_size=64, num_layers=2)
    embedding = model.get_input_embeddings().weight.numel()
    assert model.get_output_embeddings().weight.numel() == embedding  # untied: a second V x H matrix
    body = sum(p.numel() for p in model.parameters()) - 2 * embedding
    cost = logprobs.sharing_cost(model)
    fixed = logprobs.CALL_OVERHEAD_PARAMETER_TOKENS / body
    assert cost.per_forward == pytest.approx(fixed)
    assert cost.per_call == pytest.approx(fixed + logprobs.WEIGHT_GRADIENT_TOKENS)
    assert cost.per_head == pytest.approx(logprobs.WEIGHT_GRADIENT_TOKENS * embedding / body)
    assert cost.pays(cost.per_call) and not cost.pays(cost.per_call - 1)
    assert cost.pays(cost.per_forward, backward=False) and not cost.pays(cost.per_forward)
    assert not cost.pays(cost.per_call, extra_heads=1)


def test_shared_prefix_with_a_tied_fused_head_has_the_plain_gradients(tokenizer) -> None:
    """Shared prompt, fused head and tied embedding together (the 0.5B path: the prompt tokens embedded
    once through the tied lookup, the head's weight gradient handed to it): the log-probs and every
    parameter's gradient equal one plain forward's."""
    model = build_tiny_causal_lm(tokenizer, seed=0, tie_word_embeddings=True)
    model.train()
    prompt_ids, prompt_mask, completion_ids, completion_mask = _batch()
    input_ids = torch.cat([prompt_ids, completion_ids], 1)
    attention_mask = torch.cat([prompt_mask, completion_mask], 1)
    rows, inverse = distinct_rows(prompt_ids, prompt_mask)
    width = completion_ids.shape[1]
    plain_logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=width + 1).logits
    picked = plain_logits[:, :-1].log_softmax(-1).gather(-1, completion_ids.unsqueeze(-1)).squeeze(-1)
    params = list(model.parameters())
    plain = torch.autograd.grad((picked * completion_mask).sum(), params)

    head = fused_head(model)
    assert head is not None and head.tie is not None
    pieces = shared_prefix_logits(
        model,
        input_ids,
        attention_mask,
        SharedPrefix(prompt_ids.shape[1], rows, inverse),
        kv_cache_argument(model),
        head,
    )
    logps = head_token_logps(head, torch.cat(pieces, dim=1), completion_ids).logps
    torch.testing.assert_close(logps, picked, atol=1e-5, rtol=1e-5)
    shared = torch.autograd.grad((logps * completion_mask).sum(), params)
    for (name, _), a, b in zip(model.named_parameters(), plain, shared):
        torch.testing.assert_close(b, a, atol=1e-4, rtol=1e-4, msg=name)
