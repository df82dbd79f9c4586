"""Sampler properties: whole groups, whole rounds, the same order on every rank, epoch accounting."""

from __future__ import annotations

import pytest
import torch
from accelerate.data_loader import BatchSamplerShard
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.data import BatchSampler

from trainwright.trainers.grpo.sampler import (
    GroupedRoundSampler,
    RoundBatch,
    RoundLayout,
    RoundRows,
    collate_round,
)


def _sampler(num_prompts=10, g=3, prompts_per_round=2, micro_steps=4, seed=0, shuffle=True):
    layout = RoundLayout(
        num_generations=g,
        prompts_per_round=prompts_per_round,
        micro_steps_per_round=micro_steps,
        shuffle=shuffle,
        seed=seed,
    )
    return GroupedRoundSampler(num_prompts, layout)


@settings(max_examples=40, deadline=None)
@given(
    num_prompts=st.integers(1, 30),
    g=st.integers(2, 5),
    prompts_per_round=st.integers(1, 6),
    micro_steps=st.integers(1, 4),
    seed=st.integers(0, 100),
)
def test_grpo_sampler_yields_whole_groups_and_whole_rounds(
    num_prompts, g, prompts_per_round, micro_steps, seed
):
    if num_prompts < prompts_per_round:
        return
    sampler = _sampler(num_prompts, g, prompts_per_round, micro_steps, seed)
    items = list(sampler)
    assert len(items) == len(sampler)
    round_size = prompts_per_round * g
    rounds = num_prompts // prompts_per_round
    assert len(items) == rounds * round_size * micro_steps
    seen_prompts = []
    for r in range(rounds):
        block = items[r * round_size * micro_steps : (r + 1) * round_size * micro_steps]
        slots = [block[s * round_size : (s + 1) * round_size] for s in range(micro_steps)]
        first = [it.prompt_index for it in slots[0]]
        for s, slot_items in enumerate(slots):
            assert {(it.round, it.slot) for it in slot_items} == {(r, s)}
            assert [it.prompt_index for it in slot_items] == first  # every micro-step sees the round
        for k in range(prompts_per_round):  # G consecutive copies of one prompt
            assert len(set(first[k * g : (k + 1) * g])) == 1
        seen_prompts += first[::g]
    assert len(set(seen_prompts)) == len(seen_prompts)  # no prompt twice in an epoch


def test_grpo_sampler_epochs_reshuffle_reproducibly():
    a, b = _sampler(seed=7), _sampler(seed=7)
    assert list(a) == list(b)
    order0 = a.prompt_order()
    a.set_epoch(1)
    assert a.prompt_order() != order0 and sorted(a.prompt_order()) == sorted(order0)
    assert all(item.epoch == 1 for item in a)
    b.set_epoch(1)
    assert a.prompt_order() == b.prompt_order()
    assert _sampler(shuffle=False).prompt_order() == list(range(10))


def test_grpo_sampler_drops_the_partial_last_round():
    sampler = _sampler(num_prompts=7, prompts_per_round=3)  # 2 rounds, 1 prompt left over
    assert sampler.rounds_per_epoch == 2
    assert len({it.prompt_index for it in sampler}) == 6


def test_grpo_sampler_same_order_on_every_rank_and_disjoint_slices():
    """Two ranks through accelerate's real batch sharding: same rounds, complementary slices."""
    g, per_device, spg, world = 2, 2, 2, 2
    sampler = _sampler(num_prompts=8, g=g, prompts_per_round=per_device * world * spg // g, micro_steps=spg)
    batches = {}
    for rank in range(world):
        shard = BatchSamplerShard(BatchSampler(sampler, per_device * spg, drop_last=False), world, rank)
        rows = RoundRows([{"prompt": f"p{i}"} for i in range(8)], len(sampler))
        batches[rank] = [collate_round([rows[item] for item in batch]) for batch in shard]
    assert len(batches[0]) == len(batches[1]) == len(sampler) // (per_device * spg * world)
    for b0, b1 in zip(batches[0], batches[1]):
        assert (b0.round, b0.slot) == (b1.round, b1.slot)
        round_prompts = sampler.round_prompts(0, b0.round)
        union = b0.prompt_indices + b1.prompt_indices
        assert union == [p for p in round_prompts for _ in range(g)]
        assert list(b0) + list(b1) == [{"prompt": f"p{p}"} for p in union]  # the rows of those prompts


def test_grpo_sampler_trainer_epoch_accounting(tmp_path, tokenizer, tiny_model, prompts_dataset, reward_a):
    """The Trainer's steps per epoch = rounds x micro-steps per round / gradient accumulation."""
    from trainwright import GRPOConfig, GRPOTrainer

    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=4,
        steps_per_generation=2,
        num_iterations=2,
        gradient_accumulation_steps=2,
        num_train_epochs=1,
        max_completion_length=2,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        logging_steps=1,
    )
    trainer = GRPOTrainer(
        tiny_model, reward_a, args=args, train_dataset=prompts_dataset, processing_class=tokenizer
    )
    loader = trainer.get_train_dataloader()
    rounds = len(prompts_dataset) // (4 * 2 // 4)  # 24 prompts / 2 per round
    assert len(loader) == rounds * 2 * 2
    trainer.train()
    assert trainer.state.global_step == rounds * 2 * 2 // 2
    assert trainer.generation_backend.calls == rounds
    assert trainer.state.epoch == pytest.approx(1.0)


def test_grpo_sampler_rejects_too_few_prompts():
    with pytest.raises(ValueError, match="has 3 prompts but one generation round needs 4"):
        _sampler(num_prompts=3, prompts_per_round=4)


def test_grpo_round_rows_look_up_the_prompt_row():
    sampler = _sampler()
    item = next(iter(sampler))
    rows = RoundRows([{"prompt": f"p{i}"} for i in range(10)], len(sampler))
    assert len(rows) == len(sampler)
    assert rows[item] == (item, {"prompt": f"p{item.prompt_index}"})


def test_grpo_round_batch_is_the_list_of_its_rows_and_survives_device_moves():
    """A RoundBatch equals the plain list of its rows (TRL's generation batch) and keeps its tags through
    accelerate's ``send_to_device``, which rebuilds plain lists."""
    from accelerate.utils import send_to_device

    from trainwright.trainers.grpo.sampler import RoundItem

    items = [(RoundItem(1, 2, 3, i), {"prompt": f"p{i}"}) for i in (4, 4, 5, 5)]
    batch = collate_round(items)
    assert batch == [{"prompt": "p4"}] * 2 + [{"prompt": "p5"}] * 2
    moved = send_to_device(batch, torch.device("cpu"))
    assert isinstance(moved, RoundBatch) and moved.key == (1, 2) and moved.slot == 3
    assert moved.prompt_indices == [4, 4, 5, 5]
    with pytest.raises(RuntimeError, match="mixes rounds/slots"):
        collate_round(items[:2] + [(RoundItem(1, 2, 4, 5), {"prompt": "p5"})])
