"""DPOTrainer behaviour on a real tiny Qwen2: references, precompute cache, PEFT, TR-DPO, GA, resume, errors."""

from __future__ import annotations

import copy
import gc
import weakref

import pytest
import torch
from conftest import make_config, text_pairs
from torch import nn
from transformers import TrainerCallback

from trainwright import DPOConfig, DPOTrainer
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.trainers.dpo.trainer import sequence_logps


def first_log(trainer: DPOTrainer) -> dict:
    return next(entry for entry in trainer.state.log_history if "loss" in entry)


def batch_of(trainer: DPOTrainer, n: int = 4) -> dict:
    return trainer.data_collator([trainer.train_dataset[i] for i in range(n)])


def logps_with(model: nn.Module, batch: dict) -> torch.Tensor:
    with torch.no_grad():
        return sequence_logps(model, batch).logps


# ---- the forward ----------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [True, False])
def test_dpo_sequence_logps_equals_naive_log_softmax(make_model, tokenizer, tmp_path, keep) -> None:
    model = make_model()
    trainer = DPOTrainer(
        model, args=make_config(tmp_path), train_dataset=text_pairs(4), processing_class=tokenizer
    )
    batch = batch_of(trainer)
    with torch.no_grad():
        got = sequence_logps(model, batch, chunk_size=3, logits_to_keep=keep)
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        naive = logits[:, :-1].log_softmax(-1).gather(-1, batch["input_ids"][:, 1:, None])[..., 0]
        mask = batch["completion_mask"][:, 1:]
    assert torch.allclose(got.logps, (naive * mask).sum(-1), atol=1e-5)
    assert got.lengths.tolist() == mask.sum(-1).tolist()
    assert torch.allclose(got.logits_sum, (logits[:, :-1].mean(-1) * mask).sum(-1), atol=1e-5)


@pytest.mark.parametrize(
    ("with_sum_sq", "ld_alpha", "min_split_tokens"),
    [(False, None, 0), (True, None, 0), (False, 0.3, 0), (False, None, 10**9), (False, 0.3, 10**9)],
)
def test_dpo_shared_prompt_forward_equals_plain(
    make_model, tokenizer, tmp_path, with_sum_sq, ld_alpha, min_split_tokens
) -> None:
    """Each pair's prompt run once, then both halves in one call or each trimmed to its own length (the
    halves differ in length here, so ``min_split_tokens=0`` splits them): same sums and gradients (with
    LD-DPO token weights too)."""
    from trainwright.trainers.dpo.trainer import shared_prompt_sequence_logps

    model = make_model()
    pairs = text_pairs(4).map(lambda row, i: {"chosen": row["chosen"] * (i + 1)}, with_indices=True)
    trainer = DPOTrainer(
        model, args=make_config(tmp_path, ld_alpha=ld_alpha), train_dataset=pairs, processing_class=tokenizer
    )
    batch = batch_of(trainer)
    params = list(model.parameters())
    plain = sequence_logps(model, batch, with_sum_sq=with_sum_sq)
    shared = sequence_logps(
        model, batch, with_sum_sq=with_sum_sq, cache_argument="cache", min_split_tokens=min_split_tokens
    )
    for name in plain._fields:
        if getattr(plain, name) is not None:
            torch.testing.assert_close(getattr(shared, name), getattr(plain, name), atol=1e-5, rtol=1e-5)
    weights = torch.linspace(0.5, 1.5, plain.logps.shape[0])
    grads = [torch.autograd.grad((r.logps * weights).sum(), params) for r in (plain, shared)]
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
    # it did share: the prompt is the common prefix and run once per pair
    prompt = min(len(ids) for ids in trainer.train_dataset["prompt_ids"][:4])
    assert shared_prompt_sequence_logps(model, batch, prompt, (1, 1), "cache") is None  # nothing after it
    assert shared_prompt_sequence_logps(model, batch, prompt, (batch["input_ids"].shape[1],) * 2, "cache")


def test_dpo_shared_prompt_forward_is_skipped_when_pairs_differ_before_completions(
    make_model, tokenizer, tmp_path, monkeypatch
) -> None:
    import trainwright.trainers.dpo.preference_logps as dpo_module

    calls = []
    monkeypatch.setattr(dpo_module, "shared_prompt_sequence_logps", lambda *a, **k: calls.append(1))
    model = make_model()
    trainer = DPOTrainer(
        model, args=make_config(tmp_path), train_dataset=text_pairs(4), processing_class=tokenizer
    )
    batch = batch_of(trainer)
    with torch.no_grad():
        plain = sequence_logps(model, batch)
        batch["input_ids"][0, 0] += 1  # pair 0's rows now differ in their prompt
        sequence_logps(model, batch, cache_argument="cache")
        assert not calls
        batch["input_ids"][0, 0] -= 1
        sequence_logps(model, batch, cache_argument="cache", min_shared_tokens=10**9)  # too small a saving
        assert not calls
        assert torch.allclose(sequence_logps(model, batch, cache_argument="cache").logps, plain.logps)


# ---- references -----------------------------------------------------------------------------------


def test_dpo_default_reference_is_frozen_copy_of_in_memory_model(make_model, tokenizer, tmp_path) -> None:
    model = make_model()
    trainer = DPOTrainer(
        model,
        args=make_config(tmp_path, max_steps=2),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
    )
    ref = trainer.ref_model
    assert ref is not None and ref is not model and not any(p.requires_grad for p in ref.parameters())
    before = [p.clone() for p in ref.parameters()]
    trainer.train()
    assert all(torch.equal(a, b) for a, b in zip(before, ref.parameters())), "reference moved"
    assert not all(torch.equal(a, b) for a, b in zip(before, model.parameters())), "policy did not move"
    assert first_log(trainer)["loss"] == pytest.approx(0.693147, abs=1e-5)  # policy == reference at step 1


def test_dpo_reference_free_builds_no_reference(make_model, tokenizer, tmp_path) -> None:
    trainer = DPOTrainer(
        make_model(),
        args=make_config(tmp_path, reference_free=True, max_steps=1),
        train_dataset=text_pairs(4),
        processing_class=tokenizer,
    )
    assert trainer.ref_model is None
    trainer.train()
    log = first_log(trainer)
    # with reference log-probs taken as 0, the implicit reward is β·log π
    assert log["rewards/chosen"] == pytest.approx(0.1 * log["logps/chosen"], rel=1e-5)
    assert log["loss"] != pytest.approx(0.693147, abs=1e-4)


def test_dpo_simpo_needs_no_reference(make_model, tokenizer, tmp_path) -> None:
    trainer = DPOTrainer(
        make_model(),
        args=make_config(tmp_path, loss_type="simpo", max_steps=1),
        train_dataset=text_pairs(4),
        processing_class=tokenizer,
    )
    assert trainer.ref_model is None
    trainer.train()


def test_dpo_precompute_frees_reference_and_reuses_cache(make_model, tokenizer, tmp_path) -> None:
    policy = make_model(seed=0)
    ref = make_model(seed=1)
    expected_ref_logps = None
    ref_ref = weakref.ref(ref)
    cfg = make_config(tmp_path, precompute_ref_log_probs=True, precompute_ref_batch_size=3, max_steps=1)
    trainer = DPOTrainer(
        policy, ref_model=ref, args=cfg, train_dataset=text_pairs(7), processing_class=tokenizer
    )
    probe = copy.deepcopy(ref)
    del ref
    gc.collect()
    assert ref_ref() is None, "the reference model is still referenced after precompute"
    assert trainer.ref_model is None
    assert trainer.num_reference_forwards == 3  # ceil(7 / 3)
    batch = batch_of(trainer, 7)
    expected_ref_logps = logps_with(probe, batch)
    stored = torch.cat([batch["ref_chosen_logps"], batch["ref_rejected_logps"]])
    assert torch.allclose(stored, expected_ref_logps, atol=1e-5)
    trainer.train()

    # a second run with the same data and reference weights reads the cache: no reference forward
    calls = []
    probe.register_forward_hook(lambda *a: calls.append(1))
    again = DPOTrainer(
        make_model(seed=0), ref_model=probe, args=cfg, train_dataset=text_pairs(7), processing_class=tokenizer
    )
    assert again.num_reference_forwards == 0 and calls == []
    assert again.train_dataset["ref_chosen_logps"] == trainer.train_dataset["ref_chosen_logps"]
    # other weights: a different key, so it recomputes
    other = DPOTrainer(
        make_model(seed=0),
        ref_model=make_model(seed=2),
        args=cfg,
        train_dataset=text_pairs(7),
        processing_class=tokenizer,
    )
    assert other.num_reference_forwards == 3


def test_dpo_precompute_loss_equals_live_reference(make_model, tokenizer, tmp_path) -> None:
    losses = []
    for precompute in (False, True):
        trainer = DPOTrainer(
            make_model(seed=0),
            ref_model=make_model(seed=1),
            args=make_config(tmp_path / str(precompute), precompute_ref_log_probs=precompute, max_steps=2),
            train_dataset=text_pairs(8),
            processing_class=tokenizer,
        )
        trainer.train()
        losses.append([e["loss"] for e in trainer.state.log_history if "loss" in e])
    assert losses[0] == pytest.approx(losses[1], abs=1e-5)
    assert losses[0][0] != pytest.approx(0.693147, abs=1e-3)  # the reference really differs from the policy


def test_dpo_peft_uses_adapter_disabled_base_without_copy(make_model, tokenizer, tmp_path) -> None:
    peft = pytest.importorskip("peft")
    base = make_model()
    pristine = copy.deepcopy(base)
    n_base = sum(p.numel() for p in base.parameters())
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    trainer = DPOTrainer(
        base,
        args=make_config(tmp_path, max_steps=3, learning_rate=5e-2),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
        peft_config=config,
    )
    assert trainer.ref_model is None
    # every module the trainer holds: only the policy, whose size is the base plus the small adapter
    held = {id(m): m for m in vars(trainer).values() if isinstance(m, nn.Module)}
    total = sum(sum(p.numel() for p in m.parameters()) for m in held.values())
    n_lora = sum(p.numel() for n, p in trainer.model.named_parameters() if "lora_" in n)
    assert 0 < n_lora < n_base / 4
    assert total == n_base + n_lora, "a reference copy was made"
    trainer.train()
    batch = batch_of(trainer)
    ref_now = trainer._reference_logps(batch)
    assert torch.allclose(ref_now, logps_with(pristine, batch), atol=1e-5)
    assert not torch.allclose(logps_with(trainer.model, batch), ref_now, atol=1e-4), "adapter did not train"


# ---- TR-DPO ---------------------------------------------------------------------------------------


def test_dpo_reference_sync_formula() -> None:
    torch.manual_seed(0)
    policy, ref = nn.Linear(3, 2), nn.Linear(3, 2)
    want = [0.25 * p.detach() + 0.75 * r.detach() for p, r in zip(policy.parameters(), ref.parameters())]
    callback = ReferenceSyncCallback(ref, alpha=0.25, sync_steps=4)
    callback.sync(policy)
    assert all(torch.allclose(w, r) for w, r in zip(want, ref.parameters()))
    with pytest.raises(ValueError, match="alpha must be in"):
        ReferenceSyncCallback(ref, alpha=0.0)


def test_dpo_trdpo_callback_syncs_every_tau_steps(make_model, tokenizer, tmp_path) -> None:
    cfg = make_config(
        tmp_path, sync_ref_model=True, ref_model_mixup_alpha=1.0, ref_model_sync_steps=2, max_steps=3
    )
    trainer = DPOTrainer(make_model(), args=cfg, train_dataset=text_pairs(12), processing_class=tokenizer)
    callback = next(c for c in trainer.callback_handler.callbacks if isinstance(c, ReferenceSyncCallback))
    snapshots: dict[int, tuple[list, list]] = {}

    class Recorder(TrainerCallback):  # added after the sync callback, so it sees the synced reference
        def on_step_end(self, args, state, control, **kwargs):
            snapshots[state.global_step] = (
                [p.clone() for p in trainer.ref_model.parameters()],
                [p.clone() for p in trainer.model.parameters()],
            )

    trainer.add_callback(Recorder())
    trainer.train()
    assert callback.num_syncs == 1  # step 2 only
    # alpha=1: at step 2 the reference is reset to the policy; at step 3 it is not touched
    assert all(torch.equal(r, p) for r, p in zip(*snapshots[2]))
    assert all(torch.equal(a, b) for a, b in zip(snapshots[2][0], snapshots[3][0]))
    assert not all(torch.equal(r, p) for r, p in zip(*snapshots[3]))
    assert not all(torch.equal(r, p) for r, p in zip(*snapshots[1]))


# ---- gradient accumulation, resume, evaluation -------------------------------------------------------


def test_dpo_gradient_accumulation_matches_full_batch(make_model, tokenizer, tmp_path) -> None:
    weights = []
    for bs, ga in ((4, 1), (2, 2)):
        cfg = make_config(
            tmp_path / f"{bs}",
            per_device_train_batch_size=bs,
            gradient_accumulation_steps=ga,
            max_steps=1,
            optim="sgd",
            learning_rate=1.0,
            max_grad_norm=0.0,
        )
        model = make_model()
        trainer = DPOTrainer(
            model,
            ref_model=make_model(seed=1),
            args=cfg,
            train_dataset=text_pairs(8),
            processing_class=tokenizer,
        )
        trainer.train()
        weights.append([p.detach().clone() for p in model.parameters()])
    moved = max((a - b).abs().max() for a, b in zip(weights[0], make_model().parameters()))
    assert moved > 1e-3
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(*weights))


def test_dpo_resume_from_checkpoint_matches_uninterrupted(make_model, tokenizer, tmp_path) -> None:
    common = {
        "max_steps": 4,
        "save_strategy": "steps",
        "save_steps": 2,
        "per_device_train_batch_size": 2,
        "lr_scheduler_type": "constant",
    }
    full = DPOTrainer(
        make_model(),
        args=make_config(tmp_path / "full", **common),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
    )
    full.train()
    cfg = make_config(tmp_path / "resumed", **common)
    first = DPOTrainer(
        make_model(),
        args=make_config(tmp_path / "resumed", **{**common, "max_steps": 2}),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
    )
    first.train()
    resumed = DPOTrainer(make_model(), args=cfg, train_dataset=text_pairs(8), processing_class=tokenizer)
    resumed.train(resume_from_checkpoint=str(tmp_path / "resumed" / "out" / "checkpoint-2"))
    assert resumed.state.global_step == 4
    for a, b in zip(full.model.parameters(), resumed.model.parameters()):
        assert torch.allclose(a, b, atol=1e-6)
    last = lambda t: [e for e in t.state.log_history if "loss" in e][-1]
    assert last(resumed)["loss"] == pytest.approx(last(full)["loss"], abs=1e-6)
    assert last(resumed)["num_tokens"] == last(full)["num_tokens"] > 0  # the count survives the resume


def test_dpo_evaluate_reports_prefixed_metrics_and_accepts_raw_dataset(
    make_model, tokenizer, tmp_path
) -> None:
    trainer = DPOTrainer(
        make_model(),
        args=make_config(tmp_path, max_steps=2),
        train_dataset=text_pairs(8),
        eval_dataset=text_pairs(4, offset=50),
        processing_class=tokenizer,
    )
    trainer.train()
    metrics = trainer.evaluate()
    for name in (
        "rewards/chosen",
        "rewards/accuracies",
        "rewards/margins",
        "logps/rejected",
        "logits/chosen",
    ):
        assert f"eval_{name}" in metrics
    assert "num_tokens" not in metrics
    raw = trainer.evaluate(eval_dataset=text_pairs(3, offset=90))
    assert raw["eval_loss"] > 0 and "eval_rewards/margins" in raw


def test_dpo_evaluate_new_data_with_precompute_while_the_reference_is_known(
    make_model, tokenizer, tmp_path
) -> None:
    """precompute_ref_log_probs: a dataset first seen by evaluate() gets its reference log-probs while the
    policy still is the reference (the same numbers as a live frozen copy); after a step it cannot, and the
    error names the fix (TRL's message)."""
    held_out = text_pairs(4, offset=40)
    live = DPOTrainer(
        make_model(),
        args=make_config(tmp_path / "live"),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
    ).evaluate(held_out)
    trainer = DPOTrainer(
        make_model(),
        args=make_config(tmp_path, precompute_ref_log_probs=True, max_steps=1),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
    )
    before = trainer.evaluate(held_out)
    assert before["eval_loss"] == pytest.approx(live["eval_loss"], rel=1e-6)
    assert before["eval_rewards/margins"] == pytest.approx(live["eval_rewards/margins"], abs=1e-6)
    splits = trainer.evaluate({"a": held_out, "b": text_pairs(2)})
    assert splits["eval_a_loss"] == pytest.approx(before["eval_loss"], rel=1e-6) and "eval_b_loss" in splits
    trainer.train()
    with pytest.raises(
        ValueError, match="Cannot compute reference log-probs for a dataset passed to `evaluate"
    ):
        trainer.evaluate(text_pairs(3, offset=80))


def test_dpo_evaluate_new_data_with_precompute_and_peft_after_training(
    make_model, tokenizer, tmp_path
) -> None:
    """With PEFT the reference is the adapter-disabled base, known at any step: equal to the live reference."""
    peft = pytest.importorskip("peft")
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    trainer = DPOTrainer(
        make_model(),
        args=make_config(tmp_path, precompute_ref_log_probs=True, max_steps=2, learning_rate=5e-2),
        train_dataset=text_pairs(8),
        processing_class=tokenizer,
        peft_config=config,
    )
    trainer.train()
    held_out = text_pairs(4, offset=40)
    precomputed = trainer.evaluate(held_out)
    trainer.args.precompute_ref_log_probs = (
        False  # the same data scored with the live (adapter-off) reference
    )
    live = trainer.evaluate(held_out)
    assert precomputed["eval_loss"] == pytest.approx(live["eval_loss"], rel=1e-5)
    assert precomputed["eval_rewards/margins"] != 0.0


def test_dpo_model_tags_reach_the_checkpoint_model_card(make_model, tokenizer, tmp_path) -> None:
    trainer = DPOTrainer(
        make_model(),
        args=make_config(tmp_path, max_steps=1, save_strategy="steps", save_steps=1),
        train_dataset=text_pairs(4),
        processing_class=tokenizer,
    )
    assert {"trl", "dpo"} <= set(trainer.model.model_tags)
    trainer.train()
    card = (tmp_path / "out" / "README.md").read_text()
    assert "- trl" in card and "- dpo" in card


# ---- bad input ------------------------------------------------------------------------------------


def test_dpo_error_ref_model_is_model(make_model, tokenizer, tmp_path) -> None:
    model = make_model()
    with pytest.raises(ValueError, match="ref_model is the same object as model"):
        DPOTrainer(
            model,
            ref_model=model,
            args=make_config(tmp_path),
            train_dataset=text_pairs(2),
            processing_class=tokenizer,
        )


def test_dpo_error_bad_config(tmp_path) -> None:
    with pytest.raises(ValueError, match="loss_weights has 3 entries but loss_type has 2"):
        DPOConfig(output_dir=str(tmp_path), loss_type=["sigmoid", "sft"], loss_weights=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="unknown loss_type \\['dpo'\\]"):
        DPOConfig(output_dir=str(tmp_path), loss_type="dpo")
    with pytest.raises(ValueError, match="exo_pair' needs label_smoothing > 0"):
        DPOConfig(output_dir=str(tmp_path), loss_type="exo_pair")
    with pytest.raises(ValueError, match="truncation_mode must be one of"):
        DPOConfig(output_dir=str(tmp_path), truncation_mode="middle")


def test_dpo_error_trainer_inputs(make_model, tokenizer, tmp_path) -> None:
    with pytest.raises(ValueError, match="train dataset is empty"):
        DPOTrainer(
            make_model(),
            args=make_config(tmp_path),
            train_dataset=text_pairs(2).select([]),
            processing_class=tokenizer,
        )
    with pytest.raises(ValueError, match="missing column"):
        DPOTrainer(
            make_model(),
            args=make_config(tmp_path),
            train_dataset=text_pairs(2).remove_columns("rejected"),
            processing_class=tokenizer,
        )
    with pytest.raises(ValueError, match="processing_class"):
        DPOTrainer(make_model(), args=make_config(tmp_path), train_dataset=text_pairs(2))
