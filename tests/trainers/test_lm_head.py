"""The fused LM head (both trainers): same log-probs, statistics and gradients as the plain path, and when it is used."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from trainwright.toy import build_tiny_causal_lm, build_tokenizer
from trainwright.trainers.common.lm_head import HeadLogps, backbone_hidden, fused_head, head_token_logps
from trainwright.trainers.common.logprobs import embed_tokens, token_logps_and_entropy
from trainwright.trainers.common.tied_embedding import tied_embedding


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def _plain(model, ids, keep, temperature):
    logits = model(input_ids=ids, logits_to_keep=keep).logits[:, :-1] / temperature
    logps, entropy = token_logps_and_entropy(logits, ids[:, -keep + 1 :])
    return logps, entropy, logits.detach().mean(-1), logits.detach().argmax(-1) == ids[:, -keep + 1 :]


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_fused_head_matches_the_plain_head(tokenizer, tied, temperature) -> None:
    """Values and every parameter's gradient (the tied embedding's included) equal the plain path's."""
    models = [build_tiny_causal_lm(tokenizer, seed=1, tie_word_embeddings=tied) for _ in range(2)]
    ids = torch.randint(5, len(tokenizer), (3, 9), generator=torch.Generator().manual_seed(0))
    weights = torch.randn(3, 5, generator=torch.Generator().manual_seed(1))
    keep = 6
    plain = _plain(models[0], ids, keep, temperature)
    (plain[0] * weights).sum().backward()
    head = fused_head(models[1])
    assert head is not None
    hidden = backbone_hidden(head, keep, input_ids=ids)[:, :-1]
    fused = head_token_logps(head, hidden, ids[:, -keep + 1 :], temperature)
    (fused.logps * weights).sum().backward()
    torch.testing.assert_close(fused.logps, plain[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused.entropy, plain[1], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused.mean_logit, plain[2], atol=1e-6, rtol=1e-5)
    assert torch.equal(fused.top1, plain[3])
    assert not (fused.entropy.requires_grad or fused.mean_logit.requires_grad)
    for (name, a), b in zip(models[0].named_parameters(), models[1].parameters()):
        torch.testing.assert_close(b.grad, a.grad, atol=1e-6, rtol=1e-4, msg=name)


def test_fused_head_weight_gradient_is_no_view_and_a_bias_gets_one() -> None:
    """The weight gradient is a tensor of its own in the weight's layout, not the transposed view that
    ``nn.Linear``'s backward returns (autograd adds a tied embedding's gradient into it in place only
    then), and a bias gets its gradient."""
    gen = torch.Generator().manual_seed(0)
    hidden = torch.randn(4, 3, generator=gen, requires_grad=True)
    weight = torch.randn(7, 3, generator=gen, requires_grad=True)
    bias = torch.randn(7, generator=gen, requires_grad=True)
    targets = torch.tensor([0, 6, 3, 3])
    grads = torch.autograd.grad(
        HeadLogps.apply(hidden, weight, bias, targets, 1.0)[0].sum(), (hidden, weight, bias)
    )
    plain_logps = torch.log_softmax(torch.nn.functional.linear(hidden, weight, bias), -1)
    plain = torch.autograd.grad(plain_logps.gather(-1, targets[:, None]).sum(), (hidden, weight, bias))
    for got, want in zip(grads, plain):
        torch.testing.assert_close(got, want)
    assert plain[1]._is_view() and not grads[1]._is_view()
    assert grads[1].stride() == weight.stride()


def test_fused_head_refuses_a_second_backward() -> None:
    hidden = torch.randn(2, 3, requires_grad=True)
    weight = torch.randn(5, 3, requires_grad=True)
    logps = HeadLogps.apply(hidden, weight, None, torch.tensor([1, 2]), 1.0)[0].sum()
    logps.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="retain_graph"):
        logps.backward()


def test_fused_head_only_for_plain_unwrapped_heads(tokenizer) -> None:
    model = build_tiny_causal_lm(tokenizer)
    assert fused_head(model) is not None
    assert fused_head(torch.nn.DataParallel(model)) is None  # a wrapper must see its own forward
    capped = build_tiny_causal_lm(tokenizer)
    capped.config.logit_scale = 0.5  # a logit transform after the head
    assert fused_head(capped) is None
    peft = pytest.importorskip("peft")
    lora = peft.get_peft_model(
        build_tiny_causal_lm(tokenizer),
        peft.LoraConfig(r=2, target_modules=["q_proj"], task_type="CAUSAL_LM"),
    )
    assert fused_head(lora) is None
    assert fused_head(lora.get_base_model()) is None  # PEFT's injected model: its forward is PEFT's


def test_fused_head_not_past_a_patched_or_hooked_forward(tokenizer) -> None:
    """Accelerate's mixed precision wraps ``model.forward`` on the instance in autocast: calling the
    backbone directly would skip it, so the plain path must run (likewise for forward hooks)."""
    patched = build_tiny_causal_lm(tokenizer)
    patched.forward = torch.autocast("cpu", dtype=torch.bfloat16)(patched.forward)
    assert fused_head(patched) is None
    hooked = build_tiny_causal_lm(tokenizer)
    hooked.register_forward_pre_hook(lambda module, args: None)
    assert fused_head(hooked) is None


def _fused_backward(model, ids, steps: int = 1) -> None:
    for _ in range(steps):
        head = fused_head(model)
        hidden = backbone_hidden(head, 0, input_ids=ids)[:, :-1]
        head_token_logps(head, hidden, ids[:, 1:]).logps.sum().backward()


def test_tied_embedding_adds_into_the_head_gradient(tokenizer) -> None:
    """Tied to the head, the lookup's backward adds its rows into the head's weight gradient and returns
    that one tensor: ``.grad`` is the head's buffer itself (no second vocabulary × hidden buffer), dense,
    and equal to the plain path's, also when gradients accumulate over micro-batches."""
    ids = torch.randint(5, len(tokenizer), (3, 9), generator=torch.Generator().manual_seed(0))
    ids[0, 2] = tokenizer.pad_token_id  # a padding row gets no gradient in either path
    handed, plain = (build_tiny_causal_lm(tokenizer, seed=1, tie_word_embeddings=True) for _ in range(2))
    assert fused_head(handed).tie is not None
    plain.get_input_embeddings().register_forward_hook(lambda module, args, out: None)  # module lookup
    assert fused_head(plain).tie is None
    buffers = []
    original = HeadLogps.backward

    def recorded(ctx, *grads):
        out = original(ctx, *grads)
        buffers.append(ctx.tie.grad.data_ptr() if ctx.tie is not None else None)
        return out

    HeadLogps.backward = staticmethod(recorded)
    try:
        _fused_backward(handed, ids)
    finally:
        HeadLogps.backward = staticmethod(original)
    assert buffers == [handed.get_input_embeddings().weight.grad.data_ptr()]
    _fused_backward(handed, ids)  # accumulation into the existing .grad
    _fused_backward(plain, ids, steps=2)
    for (name, a), b in zip(handed.named_parameters(), plain.parameters()):
        assert a.grad.layout == torch.strided, name
        torch.testing.assert_close(a.grad, b.grad, atol=1e-6, rtol=1e-4, msg=name)


def test_tied_lookup_only_where_it_is_safe(tokenizer) -> None:
    """Untied, hooked (NEFTune adds its noise in a forward hook on the embedding) or ``max_norm`` (the
    lookup renormalises rows in place): the module embeds. A head call whose hidden states come from no
    tied lookup returns its gradient to autograd itself."""
    assert fused_head(build_tiny_causal_lm(tokenizer)).tie is None  # untied
    hooked = build_tiny_causal_lm(tokenizer, tie_word_embeddings=True)
    noise = hooked.get_input_embeddings().register_forward_hook(lambda module, args, out: out + 1.0)
    assert tied_embedding(hooked) is None
    ids = torch.tensor([[5, 6, 7, 8]])
    torch.testing.assert_close(embed_tokens(hooked, ids), hooked.get_input_embeddings().weight[ids] + 1.0)
    noise.remove()
    assert tied_embedding(hooked) is hooked.get_input_embeddings()
    hooked.get_input_embeddings().max_norm = 1.0
    assert tied_embedding(hooked) is None
    hooked.get_input_embeddings().max_norm = None
    head = fused_head(hooked)
    embeds = hooked.get_input_embeddings()(ids)  # not through the tie
    hidden = backbone_hidden(head, 0, inputs_embeds=embeds)[:, :-1]
    head_token_logps(head, hidden, ids[:, 1:]).logps.sum().backward()
    weight = hooked.get_input_embeddings().weight
    assert weight.grad is not None and weight.grad[9:].abs().sum() > 0  # the head's part arrived
