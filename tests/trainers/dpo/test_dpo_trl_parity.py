"""Same tiny model, batch and reference: our loss and metrics equal TRL 1.16's DPOTrainer to 1e-5.

TRL is a test-only oracle. One TRL trainer is built per module and its ``loss_types`` switched per
case (building it costs more than the comparison); ours is built per case from a plain config.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch
from conftest import make_config, trl_dpo_trainer
from datasets import Dataset

trl = pytest.importorskip("trl")

TRL_LOSSES = [
    "sigmoid",
    "hinge",
    "ipo",
    "robust",
    "exo_pair",
    "nca_pair",
    "bco_pair",
    "sppo_hard",
    "aot",
    "aot_unpaired",
    "apo_zero",
    "apo_down",
    "discopop",
    "sft",
    "sigmoid_norm",
]
METRICS = [
    "rewards/chosen",
    "rewards/rejected",
    "rewards/accuracies",
    "rewards/margins",
    "logps/chosen",
    "logps/rejected",
    "logits/chosen",
    "logits/rejected",
    "entropy",
    "mean_token_accuracy",
]
BETA, EPS = 0.5, 0.1
N_PAIRS = 6


def parity_pairs() -> Dataset:
    chosen = [" yes, it is.", " sure", " yes", " of course it is good", " yes!", " right"]
    rejected = [" no", " never ever", " nope, it is bad", " no", " bad", " wrong answer here"]
    return Dataset.from_list(
        [
            {"prompt": f"Q{i}: is {w} good?", "chosen": c, "rejected": r}
            for i, (w, c, r) in enumerate(zip("abcdef", chosen, rejected))
        ]
    )


@pytest.fixture(scope="module")
def models(tokenizer):
    from trainwright.toy import build_tiny_causal_lm

    reference = build_tiny_causal_lm(tokenizer, seed=1)
    policy = copy.deepcopy(reference)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # move the policy away from the reference so rewards are not all zero
        for p in policy.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return policy, reference


@pytest.fixture(scope="module")
def trl_side(models, tokenizer, tmp_path_factory):
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    policy, reference = models
    trainer = trl_dpo_trainer(
        policy,
        reference,
        parity_pairs(),
        tokenizer,
        tmp_path_factory.mktemp("trl"),
        per_device_train_batch_size=N_PAIRS,
        beta=BETA,
        label_smoothing=EPS,
        max_length=64,
    )
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(N_PAIRS)])
    return trainer, batch


def ours_for(loss_type: str, models, tokenizer, tmp_path, **config):
    from trainwright import DPOTrainer

    policy, reference = models
    args = make_config(tmp_path, beta=BETA, label_smoothing=EPS, max_length=64, loss_type=loss_type, **config)
    trainer = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=args,
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(N_PAIRS)])
    return trainer, batch


def test_dpo_tokenisation_matches_trl(trl_side, models, tokenizer, tmp_path) -> None:
    _, trl_batch = trl_side
    _, our_batch = ours_for("sigmoid", models, tokenizer, tmp_path)
    for key in ("input_ids", "attention_mask", "completion_mask"):
        assert torch.equal(our_batch[key], trl_batch[key]), key


@pytest.mark.parametrize("loss_type", TRL_LOSSES)
def test_dpo_loss_and_metrics_match_trl(loss_type, trl_side, models, tokenizer, tmp_path) -> None:
    trl_trainer, trl_batch = trl_side
    trl_trainer.loss_types, trl_trainer.loss_weights = [loss_type], [1.0]
    trl_trainer._metrics["train"].clear()
    trl_trainer._total_train_tokens = 0  # TRL's running total: compare this batch's count only
    trl_trainer.model.train()
    with torch.no_grad():
        trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    trl_metrics = {k: sum(v) / len(v) for k, v in trl_trainer._metrics["train"].items()}

    ours, batch = ours_for(loss_type, models, tokenizer, tmp_path)
    ours.model.train()
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    logs: dict[str, float] = {"loss": float(loss)}
    ours.log(logs)
    assert float(loss) == pytest.approx(float(trl_loss), abs=1e-5, rel=1e-5)
    assert abs(float(trl_loss)) > 1e-4 or loss_type in ("aot",)  # a real, non-trivial value
    for name in METRICS:
        assert logs[name] == pytest.approx(trl_metrics[name], abs=1e-5, rel=1e-5), name
    assert logs["num_tokens"] == trl_metrics["num_tokens"]
    assert 0.0 < logs["rewards/accuracies"] < 1.0  # the batch mixes won and lost pairs


@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo", "sft", "aot"])
def test_dpo_shared_prompt_forward_matches_trl(
    loss_type, trl_side, models, tokenizer, tmp_path, monkeypatch
) -> None:
    """The shared-prompt forward (each pair's prompt run once, each half trimmed to its own length) gives
    TRL's loss and metrics too; forced on here, since the tiny model is below its size threshold."""
    import trainwright.trainers.dpo.preference_logps as dpo_module
    from trainwright.trainers.common import logprobs

    monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0)
    monkeypatch.setattr(logprobs, "WEIGHT_GRADIENT_TOKENS", 0)
    runs = []
    real = dpo_module.run_shared_prefix

    def counted(*args, **kwargs):
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(dpo_module, "run_shared_prefix", counted)
    trl_trainer, trl_batch = trl_side
    trl_trainer.loss_types, trl_trainer.loss_weights = [loss_type], [1.0]
    trl_trainer._metrics["train"].clear()
    trl_trainer._total_train_tokens = 0
    trl_trainer.model.train()
    with torch.no_grad():
        trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    trl_metrics = {k: sum(v) / len(v) for k, v in trl_trainer._metrics["train"].items()}

    ours, batch = ours_for(loss_type, models, tokenizer, tmp_path)
    ours.model.train()
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    assert len(runs) == 2  # policy and reference both shared their prompts
    logs: dict[str, float] = {"loss": float(loss)}
    ours.log(logs)
    assert float(loss) == pytest.approx(float(trl_loss), abs=1e-5, rel=1e-5)
    for name in METRICS:
        assert logs[name] == pytest.approx(trl_metrics[name], abs=1e-5, rel=1e-5), name


def test_dpo_rpo_combination_matches_trl(trl_side, models, tokenizer, tmp_path) -> None:
    trl_trainer, trl_batch = trl_side
    trl_trainer.loss_types, trl_trainer.loss_weights = ["sigmoid", "sft"], [1.0, 0.3]
    with torch.no_grad():
        trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    from trainwright import DPOTrainer

    policy, reference = models
    args = make_config(
        tmp_path, beta=BETA, max_length=64, loss_type=["sigmoid", "sft"], loss_weights=[1.0, 0.3]
    )
    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=args,
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    batch = ours.data_collator([ours.train_dataset[i] for i in range(N_PAIRS)])
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    assert float(loss) == pytest.approx(float(trl_loss), abs=1e-5, rel=1e-5)


def test_dpo_conversational_tokenisation_matches_trl(tokenizer, models, tmp_path) -> None:
    def msg(role: str, text: str) -> list[dict[str, str]]:
        return [{"role": role, "content": text}]

    data = Dataset.from_list(
        [
            {
                "prompt": msg("user", f"Is {w} good?"),
                "chosen": msg("assistant", c),
                "rejected": msg("assistant", r),
            }
            for w, c, r in [("a", "yes", "no"), ("bb", "sure thing", "never"), ("ccc", "ok", "not at all")]
        ]
    )
    tokenised_like_trl(data, tokenizer, models, tmp_path)


def tokenised_like_trl(data: Dataset, tokenizer, models, tmp_path):
    """Our trainer on ``data``, after checking its tokenised columns equal TRL's trainer's."""
    from trainwright import DPOTrainer

    policy, reference = models
    theirs = trl_dpo_trainer(policy, reference, data, tokenizer, tmp_path / "trl")
    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=make_config(tmp_path),
        train_dataset=data,
        processing_class=tokenizer,
    )
    for column in ("prompt_ids", "chosen_ids", "rejected_ids"):
        assert ours.train_dataset[column] == theirs.train_dataset[column], column
    return ours


def trl_loss_and_metrics(trl_trainer, trl_batch, loss_type: str, **attributes):
    """TRL's loss and metrics of ``trl_batch`` with its trainer attributes (``loss_types``, ``ld_alpha``,
    ``f_divergence_type``, ...) set for this case, restored afterwards (the trainer is shared)."""
    saved = {name: getattr(trl_trainer, name) for name in attributes}
    trl_trainer.loss_types, trl_trainer.loss_weights = [loss_type], [1.0]
    for name, value in attributes.items():
        setattr(trl_trainer, name, value)
    trl_trainer._metrics["train"].clear()
    trl_trainer._total_train_tokens = 0
    trl_trainer.model.train()
    try:
        with torch.no_grad():
            loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    finally:
        for name, value in saved.items():
            setattr(trl_trainer, name, value)
    return float(loss), {k: sum(v) / len(v) for k, v in trl_trainer._metrics["train"].items()}


def our_loss_and_logs(ours, batch) -> tuple[float, dict[str, float]]:
    ours.model.train()
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    logs: dict[str, float] = {"loss": float(loss)}
    ours.log(logs)
    return float(loss), logs


F_CASES = [
    ("forward_kl", "sigmoid"),
    ("js_divergence", "sigmoid"),
    ("alpha_divergence", "sigmoid"),
    ("forward_kl", "ipo"),
    ("js_divergence", "hinge"),
    ("alpha_divergence", "sigmoid_norm"),
    ("forward_kl", "robust"),
    ("js_divergence", "discopop"),
    ("alpha_divergence", "exo_pair"),
]


@pytest.mark.parametrize(("divergence", "loss_type"), F_CASES)
def test_dpo_f_divergence_matches_trl(divergence, loss_type, trl_side, models, tokenizer, tmp_path) -> None:
    """f-DPO: the same loss and metrics as TRL's for every divergence, on the losses that have an f-DPO form."""
    trl_trainer, trl_batch = trl_side
    alpha = 0.3
    trl_loss, trl_metrics = trl_loss_and_metrics(
        trl_trainer, trl_batch, loss_type, f_divergence_type=divergence, f_alpha_divergence_coef=alpha
    )
    ours, batch = ours_for(
        loss_type, models, tokenizer, tmp_path, f_divergence_type=divergence, f_alpha_divergence_coef=alpha
    )
    loss, logs = our_loss_and_logs(ours, batch)
    assert loss == pytest.approx(trl_loss, abs=1e-5, rel=1e-5)
    for name in METRICS:
        assert logs[name] == pytest.approx(trl_metrics[name], abs=1e-5, rel=1e-5), name
    plain, _ = our_loss_and_logs(*ours_for(loss_type, models, tokenizer, tmp_path / "plain"))
    assert abs(loss - plain) > 1e-4  # the divergence really changes the loss


def test_dpo_f_divergence_refused_for_losses_without_an_f_form(tmp_path) -> None:
    from trainwright import DPOConfig

    with pytest.raises(
        ValueError, match=r"f_divergence_type='forward_kl' is only supported .*\['bco_pair'\]"
    ):
        DPOConfig(output_dir=str(tmp_path), f_divergence_type="forward_kl", loss_type=["sigmoid", "bco_pair"])
    with pytest.raises(ValueError, match="f_divergence_type must be one of"):
        DPOConfig(output_dir=str(tmp_path), f_divergence_type="kl")


@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo", "sft", "apo_zero"])
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_dpo_ld_alpha_matches_trl(alpha, loss_type, trl_side, models, tokenizer, tmp_path) -> None:
    """LD-DPO: TRL's loss and metrics, policy and reference log-probs both down-weighted past the shared length."""
    trl_trainer, trl_batch = trl_side
    trl_loss, trl_metrics = trl_loss_and_metrics(trl_trainer, trl_batch, loss_type, ld_alpha=alpha)
    ours, batch = ours_for(loss_type, models, tokenizer, tmp_path, ld_alpha=alpha)
    loss, logs = our_loss_and_logs(ours, batch)
    assert loss == pytest.approx(trl_loss, abs=1e-5, rel=1e-5)
    for name in METRICS:
        assert logs[name] == pytest.approx(trl_metrics[name], abs=1e-5, rel=1e-5), name
    if loss_type != "sft":  # sft reads per-token log-probs, which LD-DPO leaves alone (in TRL too)
        plain, _ = our_loss_and_logs(*ours_for(loss_type, models, tokenizer, tmp_path / "plain"))
        assert abs(loss - plain) > 1e-4


def test_dpo_ld_alpha_precomputed_reference_matches_trl(trl_side, models, tokenizer, tmp_path) -> None:
    """The precompute pass weighs the reference log-probs as the live forward does (TRL's compute_ref_log_probs)."""
    trl_trainer, trl_batch = trl_side
    trl_trainer.ld_alpha = 0.25
    try:
        trl_chosen, trl_rejected = trl_trainer.compute_ref_log_probs(trl_trainer.ref_model, trl_batch)
    finally:
        trl_trainer.ld_alpha = None
    ours, _ = ours_for("sigmoid", models, tokenizer, tmp_path, ld_alpha=0.25, precompute_ref_log_probs=True)
    torch.testing.assert_close(
        torch.tensor(ours.train_dataset["ref_chosen_logps"]), trl_chosen, rtol=1e-5, atol=1e-5
    )
    torch.testing.assert_close(
        torch.tensor(ours.train_dataset["ref_rejected_logps"]), trl_rejected, rtol=1e-5, atol=1e-5
    )


def test_dpo_moe_load_balancing_loss_matches_trl(tokenizer, tmp_path) -> None:
    """A Mixture-of-Experts policy: the loss adds ``router_aux_loss_coef`` × the model's load-balancing loss and
    logs it as ``aux_loss``, equal to TRL's; ``aux_loss_enabled`` is TRL's public flag."""
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    from trainwright import DPOTrainer

    config = Qwen3MoeConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        moe_intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        num_experts=4,
        num_experts_per_tok=2,
        router_aux_loss_coef=0.5,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    reference = Qwen3MoeForCausalLM(config)
    policy = copy.deepcopy(reference)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    theirs = trl_dpo_trainer(
        policy, reference, parity_pairs(), tokenizer, tmp_path / "trl", beta=BETA, max_length=64
    )
    trl_batch = theirs.data_collator([theirs.train_dataset[i] for i in range(N_PAIRS)])
    assert theirs.aux_loss_enabled
    trl_loss, trl_metrics = trl_loss_and_metrics(theirs, trl_batch, "sigmoid")

    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=make_config(tmp_path, beta=BETA, max_length=64),
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    assert ours.aux_loss_enabled and ours.router_aux_loss_coef == 0.5
    batch = ours.data_collator([ours.train_dataset[i] for i in range(N_PAIRS)])
    loss, logs = our_loss_and_logs(ours, batch)
    assert logs["aux_loss"] == pytest.approx(trl_metrics["aux_loss"], rel=1e-5)
    assert logs["aux_loss"] > 0.1  # a real load-balancing loss, weighted 0.5 into the total
    assert loss == pytest.approx(trl_loss, abs=1e-5, rel=1e-5)

    off = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=make_config(tmp_path / "off", beta=BETA, max_length=64, router_aux_loss_coef=0.0),
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    assert not off.aux_loss_enabled
    off_loss, off_logs = our_loss_and_logs(off, batch)
    assert "aux_loss" not in off_logs
    assert loss - off_loss == pytest.approx(0.5 * logs["aux_loss"], rel=1e-4)


@pytest.mark.parametrize("config", [{}, {"loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 0.5]}])
def test_dpo_log_and_evaluate_keys_equal_trls(config, models, tokenizer, tmp_path) -> None:
    """The same toy run with both trainers: every training log, the run summary and ``evaluate()`` carry
    exactly TRL's keys (so a dashboard or ``metric_for_best_model`` written for TRL finds its metrics)."""
    from trainwright import DPOTrainer

    policy, reference = models
    train, held_out = parity_pairs(), parity_pairs().select(range(3))
    run = {"max_steps": 2, "logging_steps": 1, "per_device_train_batch_size": 3, "max_length": 64, **config}
    theirs = trl.DPOTrainer(
        model=copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=trl.DPOConfig(
            output_dir=str(tmp_path / "trl"),
            bf16=False,
            gradient_checkpointing=False,
            report_to="none",
            use_cpu=True,
            save_strategy="no",
            **run,
        ),
        train_dataset=train,
        eval_dataset=held_out,
        processing_class=tokenizer,
    )
    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=make_config(tmp_path, **run),
        train_dataset=train,
        eval_dataset=held_out,
        processing_class=tokenizer,
    )

    def keys(trainer) -> tuple[list[set[str]], set[str]]:
        trainer.train()
        logs = [set(entry) for entry in trainer.state.log_history]
        return logs, set(trainer.evaluate())

    trl_logs, trl_eval = keys(theirs)
    our_logs, our_eval = keys(ours)
    assert our_logs == trl_logs
    assert our_eval == trl_eval
    assert {"eval_rewards/margins", "eval_entropy", "eval_mean_token_accuracy", "eval_num_tokens"} <= our_eval


def test_dpo_per_row_chat_template_kwargs_tokenise_as_trl(tokenizer, models, tmp_path) -> None:
    """Each row's ``chat_template_kwargs`` reach the chat template (here: upper-case role names on odd rows),
    giving TRL's token ids; an implicit conversational prompt too."""
    tok = copy.deepcopy(tokenizer)
    tok.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] | upper if shout else m['role'] }}\n{{ m['content'] }}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    rows = [
        {
            "chosen": [{"role": "user", "content": f"Is {w} good?"}, {"role": "assistant", "content": c}],
            "rejected": [{"role": "user", "content": f"Is {w} good?"}, {"role": "assistant", "content": r}],
            "chat_template_kwargs": {"shout": bool(i % 2)},
        }
        for i, (w, c, r) in enumerate([("a", "yes", "no"), ("bb", "sure", "never"), ("ccc", "ok", "bad")])
    ]
    ours = tokenised_like_trl(Dataset.from_list(rows), tok, models, tmp_path)
    shouted = tok("USER")["input_ids"]
    first, second = ours.train_dataset["prompt_ids"][:2]
    assert not _contains(first, shouted) and _contains(second, shouted)


def _contains(ids: list[int], part: list[int]) -> bool:
    return any(ids[i : i + len(part)] == part for i in range(len(ids) - len(part) + 1))


@pytest.mark.parametrize("sharing", [False, True])
def test_dpo_training_with_tied_embeddings_tracks_trl(sharing, tokenizer, tmp_path, monkeypatch) -> None:
    """Three optimizer steps on a model whose embedding is tied to its LM head (the 0.5B set-up: the
    head's weight gradient handed to the tied lookup, ``trainers/common/tied_embedding.py``): every step's loss
    equals TRL's, with the shared-prompt forward forced on or off."""
    from trainwright import DPOTrainer
    from trainwright.toy import build_tiny_causal_lm
    from trainwright.trainers.common import lm_head, logprobs

    monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0 if sharing else 1e30)
    monkeypatch.setattr(logprobs, "WEIGHT_GRADIENT_TOKENS", 0)
    lookups = []
    real = lm_head.embed_tied
    monkeypatch.setattr(lm_head, "embed_tied", lambda *a: lookups.append(1) or real(*a))
    model = build_tiny_causal_lm(tokenizer, seed=1, tie_word_embeddings=True)
    config = {"per_device_train_batch_size": 2, "max_steps": 3, "learning_rate": 1e-2, "beta": BETA}
    theirs = trl_dpo_trainer(
        model, model, parity_pairs(), tokenizer, tmp_path / "trl", **config, logging_steps=1
    )
    ours = DPOTrainer(
        copy.deepcopy(model),
        ref_model=copy.deepcopy(model),
        args=make_config(tmp_path, **config),
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    losses = []
    for trainer in (theirs, ours):
        trainer.train()
        losses.append([entry["loss"] for entry in trainer.state.log_history if "loss" in entry])
    assert len(lookups) == 3  # every policy forward went through the tied lookup
    assert len(losses[1]) == 3 and losses[0][2] != losses[0][0]  # the model moved
    assert losses[1] == pytest.approx(losses[0], abs=1e-5, rel=1e-5)
