"""The model.generate backend: left padding does not change completions; completions stop at EOS."""

from __future__ import annotations

from trainwright.trainers.grpo.generation import SamplingSettings, TransformersGenerateBackend


def _greedy(tokenizer, eos_ids, max_len=6):
    settings = SamplingSettings(max_completion_length=max_len, extra={"do_sample": False})
    return TransformersGenerateBackend(settings, pad_token_id=tokenizer.pad_token_id, eos_token_ids=eos_ids)


def test_grpo_backend_left_pads_prompts_of_different_lengths(tokenizer, tiny_model):
    backend = _greedy(tokenizer, [tokenizer.eos_token_id])
    short = tokenizer("Hi")["input_ids"]
    long = tokenizer("The quick brown fox jumps over")["input_ids"]
    assert len(short) < len(long)
    batched = backend.generate(tiny_model, [short, long])
    alone = [backend.generate(tiny_model, [short])[0], backend.generate(tiny_model, [long])[0]]
    assert batched == alone
    assert backend.calls == 3
    assert tiny_model.training  # restored after generation (train mode is the default after construction)


def test_grpo_backend_cuts_completions_after_the_first_eos(tokenizer, tiny_model):
    prompt = tokenizer("Hello world")["input_ids"]
    free = _greedy(tokenizer, [tokenizer.eos_token_id], max_len=8).generate(tiny_model, [prompt])[0]
    stop = free[2]  # pretend the third generated token is an end-of-sequence token
    cut = _greedy(tokenizer, [tokenizer.eos_token_id, stop], max_len=8).generate(tiny_model, [prompt])[0]
    assert cut == free[: free.index(stop) + 1]
    assert cut[-1] == stop


def test_grpo_backend_sampling_settings_reach_generate(tokenizer):
    settings = SamplingSettings(
        max_completion_length=5,
        temperature=0.7,
        top_p=0.9,
        top_k=20,
        min_p=0.05,
        repetition_penalty=1.1,
        extra={"top_k": 10},
    )
    config = TransformersGenerateBackend(
        settings, tokenizer.pad_token_id, [tokenizer.eos_token_id]
    ).generation_config
    assert (config.max_new_tokens, config.temperature, config.top_p, config.min_p) == (5, 0.7, 0.9, 0.05)
    assert config.repetition_penalty == 1.1 and config.do_sample
    assert config.top_k == 10  # generation_kwargs override the named knobs


def test_grpo_backend_prefills_each_distinct_prompt_once(tokenizer, tiny_model, monkeypatch):
    """G copies of a prompt are prefilled once; greedy and seeded sampled completions are those of the
    plain call (which generate prefills row by row)."""
    import torch

    from trainwright.trainers.common import logprobs

    monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0)  # the toy model is below the cost bar
    short = tokenizer("Hi there")["input_ids"]
    long = tokenizer("The quick brown fox jumps over")["input_ids"]
    prompts = [short] * 3 + [long] * 3  # left padding makes the short prompt's rows differ from the long's
    forwards = []
    hook = tiny_model.register_forward_pre_hook(
        lambda module, args, kwargs: forwards.append(kwargs), with_kwargs=True
    )
    try:
        for extra in ({"do_sample": False}, {}):
            settings = SamplingSettings(max_completion_length=6, extra=extra)
            results = []
            for share in (True, False):
                backend = TransformersGenerateBackend(
                    settings, tokenizer.pad_token_id, [tokenizer.eos_token_id]
                )
                backend.prompt_sharing.enabled = share
                forwards.clear()
                torch.manual_seed(0)
                results.append(backend.generate(tiny_model, prompts))
                first = forwards[0]["input_ids"]
                # shared: the prefill call runs 2 distinct rows, all but the last column; plain: 6 full rows
                assert first.shape == ((2, len(long) - 1) if share else (6, len(long)))
            assert results[0] == results[1]
    finally:
        hook.remove()
