"""DPO's TRL options on a real tiny Qwen2: padding_free, use_weighting (WPO), models and tokenizers from
folders (model_init_kwargs), bad rows named, and TR-DPO's reference surviving a resume bit for bit."""

from __future__ import annotations

import copy
import os

import pytest
import torch
import torch.nn.functional as F
from conftest import make_config, text_pairs, trl_dpo_trainer
from datasets import Dataset

from trainwright import DPOConfig, DPOTrainer
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.toy import save_tiny_model
from trainwright.trainers.dpo.data import PreferenceCollator, prepare_preference_dataset

BETA = 0.5


def _trainer(make_model, tokenizer, tmp_path, n=8, **overrides) -> DPOTrainer:
    return DPOTrainer(
        make_model(seed=0),
        ref_model=make_model(seed=1),
        args=make_config(tmp_path, beta=BETA, **overrides),
        train_dataset=text_pairs(n),
        processing_class=tokenizer,
    )


def _batch(trainer: DPOTrainer, n: int = 4) -> dict:
    return trainer.data_collator([trainer.train_dataset[i] for i in range(n)])


def _loss_grads_logs(trainer: DPOTrainer, batch: dict) -> tuple[float, torch.Tensor, dict]:
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, batch)
    loss.backward()
    grads = torch.cat([p.grad.flatten() for p in trainer.model.parameters()])
    logs: dict = {}
    trainer.log(logs)
    return float(loss), grads, logs


# ---- padding_free ---------------------------------------------------------------------------------


def test_dpo_padding_free_collator_packs_with_restarting_positions() -> None:
    examples = [
        {"prompt_ids": [1, 2, 3], "chosen_ids": [4, 5], "rejected_ids": [6]},
        {"prompt_ids": [7, 8], "chosen_ids": [9], "rejected_ids": [10, 11, 12]},
    ]
    batch = PreferenceCollator(pad_token_id=0, padding_free=True)(examples)
    assert batch["input_ids"].tolist() == [[1, 2, 3, 4, 5, 7, 8, 9, 1, 2, 3, 6, 7, 8, 10, 11, 12]]
    assert batch["position_ids"].tolist() == [[0, 1, 2, 3, 4, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3, 4]]
    assert batch["completion_mask"].tolist() == [[0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1]]
    assert batch["sequence_index"].tolist() == [[0] * 5 + [1] * 3 + [2] * 4 + [3] * 5]
    assert batch["sequence_lengths"].tolist() == [5, 3, 4, 5]
    assert "attention_mask" not in batch  # transformers only detects packed sequences without one


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("option", [{}, {"use_weighting": True}, {"ld_alpha": 0.3}])
def test_dpo_padding_free_equals_padded(make_model, tokenizer, tmp_path, attn, option) -> None:
    """Same loss, metrics and gradients from one packed row as from the padded batch (WPO and LD-DPO too)."""
    results = []
    for padding_free in (False, True):
        trainer = DPOTrainer(
            make_model(seed=0, attn_implementation=attn),
            ref_model=make_model(seed=1, attn_implementation=attn),
            args=make_config(tmp_path / str(padding_free), padding_free=padding_free, **option),
            train_dataset=text_pairs(8),
            processing_class=tokenizer,
        )
        batch = _batch(trainer)
        assert ("attention_mask" in batch) is not padding_free
        assert ("logp_weights" in batch) is ("ld_alpha" in option)
        results.append(_loss_grads_logs(trainer, batch))
    (padded_loss, padded_grads, padded_logs), (packed_loss, packed_grads, packed_logs) = results
    assert packed_loss == pytest.approx(padded_loss, abs=1e-6)
    torch.testing.assert_close(packed_grads, padded_grads, rtol=1e-5, atol=1e-7)
    assert packed_logs.keys() == padded_logs.keys()
    for key, value in padded_logs.items():
        assert packed_logs[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
    assert padded_logs["rewards/margins"] != 0.0  # policy and reference differ: a real comparison


def test_dpo_padding_free_precompute_and_training_match_padded(make_model, tokenizer, tmp_path) -> None:
    weights = []
    for padding_free in (False, True):
        trainer = _trainer(
            make_model,
            tokenizer,
            tmp_path / str(padding_free),
            padding_free=padding_free,
            precompute_ref_log_probs=True,
            max_steps=3,
        )
        trainer.train()
        weights.append(torch.cat([p.detach().flatten() for p in trainer.model.parameters()]))
    # Adam amplifies float rounding a little over 3 steps; a packing error would move weights by ~lr (1e-2)
    torch.testing.assert_close(weights[1], weights[0], rtol=0, atol=1e-4)


# ---- use_weighting (WPO) ----------------------------------------------------------------------------


def test_dpo_wpo_loss_equals_the_formula_by_hand(make_model, tokenizer, tmp_path) -> None:
    """loss = mean_pairs( w_c·w_r · −logσ(β·D) ), w = exp(mean_t[log p_t − log Σ_v p_v²]), by full softmax."""
    trainer = _trainer(make_model, tokenizer, tmp_path, use_weighting=True)
    batch = _batch(trainer)
    with torch.no_grad():
        loss = trainer.compute_loss(trainer.model, batch)

        def per_token(model):
            logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[
                :, :-1
            ]
            logp_all = logits.log_softmax(-1)
            logp = logp_all.gather(-1, batch["input_ids"][:, 1:, None])[..., 0]
            log_sum_sq = torch.log((logp_all.exp() ** 2).sum(-1))
            return logp, log_sum_sq

        mask = batch["completion_mask"][:, 1:].float()
        logp, log_sum_sq = per_token(trainer.model)
        ref_logp, _ = per_token(trainer.ref_model)
        seq, ref_seq = (logp * mask).sum(-1), (ref_logp * mask).sum(-1)
        w = torch.exp(((logp - log_sum_sq) * mask).sum(-1) / mask.sum(-1))
        half = seq.shape[0] // 2
        margin = (seq[:half] - ref_seq[:half]) - (seq[half:] - ref_seq[half:])
        expected = (w[:half] * w[half:] * -F.logsigmoid(BETA * margin)).mean()
    assert float(loss) == pytest.approx(float(expected), rel=1e-5)
    unweighted = (-F.logsigmoid(BETA * margin)).mean()
    assert abs(float(expected) - float(unweighted)) > 1e-2  # the weights really act


@pytest.fixture(scope="module")
def trl_weighted(tokenizer, tmp_path_factory):
    pytest.importorskip("trl")
    from trainwright.toy import build_tiny_causal_lm

    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    reference = build_tiny_causal_lm(tokenizer, seed=1)
    policy = copy.deepcopy(reference)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=generator))
    trainer = trl_dpo_trainer(
        policy,
        reference,
        text_pairs(6),
        tokenizer,
        tmp_path_factory.mktemp("trl-wpo"),
        beta=BETA,
        label_smoothing=0.1,
        use_weighting=True,
        max_length=64,
    )
    return trainer, policy, reference


# Not hinge: TRL 1.16 multiplies the weights in place into relu's output, which autograd needs, so its
# backward raises "modified by an inplace operation" (ours multiplies out of place).
@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo", "robust", "apo_zero", "nca_pair", "sigmoid_norm"])
def test_dpo_wpo_matches_trl(trl_weighted, tokenizer, tmp_path, loss_type) -> None:
    trl_trainer, policy, reference = trl_weighted
    trl_trainer.loss_types, trl_trainer.loss_weights = [loss_type], [1.0]
    trl_batch = trl_trainer.data_collator([trl_trainer.train_dataset[i] for i in range(6)])
    trl_trainer.model.zero_grad()
    trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    trl_loss.backward()
    trl_grads = torch.cat([p.grad.flatten() for p in trl_trainer.model.parameters()])

    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=make_config(
            tmp_path, beta=BETA, label_smoothing=0.1, use_weighting=True, max_length=64, loss_type=loss_type
        ),
        train_dataset=text_pairs(6),
        processing_class=tokenizer,
    )
    loss, grads, _ = _loss_grads_logs(ours, _batch(ours, 6))
    assert loss == pytest.approx(float(trl_loss), rel=1e-5, abs=1e-7)
    torch.testing.assert_close(grads, trl_grads, rtol=1e-4, atol=1e-7)  # weights carry no gradient, in both


def test_dpo_wpo_refused_with_sorting_losses(tmp_path) -> None:
    with pytest.raises(ValueError, match="use_weighting .* 'aot'"):
        DPOConfig(output_dir=str(tmp_path), use_weighting=True, loss_type=["sigmoid", "aot"])


# ---- models and tokenizers from folders --------------------------------------------------------------


def test_dpo_loads_model_reference_and_tokenizer_from_folders(tmp_path) -> None:
    policy_dir = save_tiny_model(tmp_path / "policy", seed=0)
    ref_dir = save_tiny_model(tmp_path / "ref", seed=1)
    trainer = DPOTrainer(
        str(policy_dir),
        ref_model=str(ref_dir),
        args=make_config(tmp_path, model_init_kwargs={"dtype": "bfloat16"}, max_steps=1),
        train_dataset=text_pairs(4),
    )
    assert trainer.processing_class.name_or_path == str(policy_dir)  # loaded from the model's folder
    assert trainer.model.dtype == torch.bfloat16 and trainer.ref_model.dtype == torch.bfloat16
    from transformers import AutoModelForCausalLM

    saved_ref = AutoModelForCausalLM.from_pretrained(ref_dir, dtype=torch.bfloat16)
    assert all(torch.equal(a, b) for a, b in zip(saved_ref.parameters(), trainer.ref_model.parameters()))
    trainer.train()
    # TRL's default dtype for a model loaded from a folder: float32
    default = DPOTrainer(str(policy_dir), args=make_config(tmp_path / "f32"), train_dataset=text_pairs(4))
    assert default.model.dtype == torch.float32


def test_dpo_model_init_kwargs_ignored_for_an_instance_warns(make_model, tokenizer, tmp_path, caplog) -> None:
    """Through a ``trainwright`` logger, as TRL's ``logger.warning`` (TRL's tests read warnings with caplog)."""
    with caplog.at_level("WARNING", logger="trainwright"):
        DPOTrainer(
            make_model(),
            args=make_config(tmp_path, model_init_kwargs={"dtype": "bfloat16"}),
            train_dataset=text_pairs(2),
            processing_class=tokenizer,
        )
    assert any(
        r.name.startswith("trainwright.") and "model_init_kwargs is ignored" in r.getMessage()
        for r in caplog.records
    )


# ---- bad rows are named ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("columns", "error", "message"),
    [
        (
            {"prompt": ["Q0?", "Q1?"], "chosen": [1, 2], "rejected": [" no", " no"]},
            TypeError,
            r"train dataset row 0: column 'chosen' holds int \(1\); plain-text preference data .* needs a string",
        ),
        (
            {"prompt": ["Q0?", "Q1?", None], "chosen": [" y"] * 3, "rejected": [" n"] * 3},
            TypeError,
            r"row 2: column 'prompt' holds NoneType \(None\)",
        ),
        (
            {"prompt": ["Q0?", ""], "chosen": [" y"] * 2, "rejected": [" n"] * 2},
            ValueError,
            r"row 1: column 'prompt' is an empty string",
        ),
        (
            {"prompt": ["Q0?", "Q1?"], "chosen": [" y"] * 2, "rejected": [" n", None]},
            TypeError,
            r"row 1: column 'rejected' holds NoneType",
        ),
    ],
)
def test_dpo_bad_rows_name_row_column_and_type(tokenizer, columns, error, message) -> None:
    with pytest.raises(error, match=message):
        prepare_preference_dataset(
            Dataset.from_dict(columns), tokenizer, max_length=64, truncation_mode="keep_start", name="train"
        )


def test_dpo_conversational_row_with_empty_reply_is_named(tokenizer) -> None:
    user = [{"role": "user", "content": "hi"}]
    reply = [{"role": "assistant", "content": "a"}]
    good = {"prompt": user, "chosen": reply, "rejected": [{"role": "assistant", "content": "b"}]}
    bad = {"prompt": user, "chosen": reply, "rejected": []}
    dataset = Dataset.from_list([good, bad])
    with pytest.raises(ValueError, match=r"row 1: column 'rejected' holds list \(\[\]\); conversational"):
        prepare_preference_dataset(dataset, tokenizer, max_length=64, truncation_mode="keep_start")


# ---- TR-DPO: the blended reference is checkpointed ----------------------------------------------------


def test_dpo_trdpo_sync_and_resume_is_bit_identical(make_model, tokenizer, tmp_path) -> None:
    common = {
        "sync_ref_model": True,
        "ref_model_mixup_alpha": 0.5,
        "ref_model_sync_steps": 1,
        "save_strategy": "steps",
        "save_steps": 2,
        "per_device_train_batch_size": 2,
        "lr_scheduler_type": "constant",
    }

    def run(folder, max_steps, resume=None):
        trainer = DPOTrainer(
            make_model(),
            args=make_config(tmp_path / folder, max_steps=max_steps, **common),
            train_dataset=text_pairs(8),
            processing_class=tokenizer,
        )
        trainer.train(resume_from_checkpoint=resume)
        return trainer

    def state(trainer):
        sync = next(c for c in trainer.callback_handler.callbacks if isinstance(c, ReferenceSyncCallback))
        return (
            [p.detach().clone() for p in trainer.model.parameters()],
            [p.detach().clone() for p in trainer.ref_model.parameters()],
            sync.num_syncs,
        )

    full = state(run("full", 4))
    run("resumed", 2)
    checkpoint = str(tmp_path / "resumed" / "out" / "checkpoint-2")
    assert os.path.exists(os.path.join(checkpoint, ReferenceSyncCallback.CHECKPOINT_FILE))
    resumed = state(run("resumed", 4, resume=checkpoint))
    assert resumed[2] == full[2] == 4
    assert all(torch.equal(a, b) for a, b in zip(full[0], resumed[0])), "policy differs after resume"
    assert all(torch.equal(a, b) for a, b in zip(full[1], resumed[1])), "reference differs after resume"

    # without the saved reference the resumed run starts steps 3-4 from the wrong reference: it diverges
    os.remove(os.path.join(checkpoint, ReferenceSyncCallback.CHECKPOINT_FILE))
    with pytest.warns(UserWarning, match="holds no TR-DPO reference"):
        unrestored = state(run("resumed", 4, resume=checkpoint))
    assert not all(torch.equal(a, b) for a, b in zip(full[1], unrestored[1]))
    assert not all(torch.equal(a, b) for a, b in zip(full[0], unrestored[0]))


def test_dpo_trdpo_torn_reference_file_warns_instead_of_crashing(tmp_path) -> None:
    callback = ReferenceSyncCallback(torch.nn.Linear(2, 2))
    before = [p.detach().clone() for p in callback.ref_model.parameters()]
    (tmp_path / ReferenceSyncCallback.CHECKPOINT_FILE).write_bytes(b"PK\x03\x04 torn by a crash")
    with pytest.warns(UserWarning, match="cannot read its TR-DPO reference"):
        assert callback.load_checkpoint(str(tmp_path)) is False
    assert all(torch.equal(a, b) for a, b in zip(before, callback.ref_model.parameters()))
