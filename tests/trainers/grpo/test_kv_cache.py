"""The preallocated decoding cache: the same keys/values (so bit-identical logits) as DynamicCache."""

from __future__ import annotations

import torch
from transformers import DynamicCache

from trainwright.trainers.grpo.kv_cache import PreallocatedLayer, preallocated_cache


def _decode(model, cache, prompt, mask, steps):
    """Greedy decoding from a prefilled ``cache``: the logits of every step."""
    ids, logits = prompt[:, -1:], []  # the cache holds all prompt columns but the last
    with torch.no_grad():
        for _ in range(steps):
            out = model(input_ids=ids, attention_mask=mask, cache=cache)
            logits.append(out.logits[:, -1])
            ids = out.logits[:, -1:].argmax(-1)
            mask = torch.cat([mask, mask.new_ones(mask.shape[0], 1)], dim=1)
    return torch.stack(logits)


def test_preallocated_cache_gives_the_logits_of_a_dynamic_cache(tokenizer, tiny_model):
    tiny_model.eval()
    prompt = torch.tensor([tokenizer("The quick brown fox")["input_ids"]] * 3)
    mask = torch.ones_like(prompt)
    mask[0, :2] = 0  # a left-padded row
    with torch.no_grad():
        head = tiny_model(input_ids=prompt[:, :-1], attention_mask=mask[:, :-1], use_cache=True)
    pairs = [(layer.keys, layer.values) for layer in head.cache.layers]
    width = prompt.shape[1]
    plain = _decode(tiny_model, DynamicCache([(k.clone(), v.clone()) for k, v in pairs]), prompt, mask, 6)
    exact = _decode(tiny_model, preallocated_cache(pairs, capacity=width + 6), prompt, mask, 6)
    short = _decode(tiny_model, preallocated_cache(pairs, capacity=width), prompt, mask, 6)  # must grow
    assert torch.equal(plain, exact) and torch.equal(plain, short)


def test_preallocated_layer_writes_in_place_and_survives_outside_edits():
    keys, values = torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4)
    layer = PreallocatedLayer(keys, values, capacity=6)
    buffer = layer.keys.data_ptr()
    new_k, new_v = torch.randn(2, 1, 1, 4), torch.randn(2, 1, 1, 4)
    out_k, out_v = layer.update(new_k, new_v)
    assert out_k.data_ptr() == buffer  # no new allocation
    assert torch.equal(out_k, torch.cat([keys, new_k], dim=-2))
    assert torch.equal(out_v, torch.cat([values, new_v], dim=-2))
    layer.crop(-1)  # DynamicLayer's own crop: a shorter view of the same buffer
    assert layer.get_seq_length() == 3
    layer.batch_select_indices(torch.tensor([1]))  # replaces keys/values with a fresh tensor
    out_k, _ = layer.update(new_k[1:], new_v[1:])
    assert torch.equal(out_k, torch.cat([keys[1:], new_k[1:]], dim=-2))
    for _ in range(4):  # past the capacity: grows
        out_k, _ = layer.update(new_k[1:], new_v[1:])
    assert out_k.shape == (1, 1, 8, 4)
