"""A foreign or damaged reference of plain tensors is refused before use (issue 38, item 4).

The audit: a ``reference_sync.pt`` (TR-DPO) holding only tensors, of another model's names or shapes, passed
the loader and failed later with ``KeyError``/``RuntimeError``; one of all-NaN tensors loaded, and the run
trained to NaN weights with exit 0. The DPO reference log-prob cache had the same hole. Each case is a real
file read by the real callback or trainer.
"""

from __future__ import annotations

import math

import pytest
import torch
from rel_trainers import StopAt, dpo_trainer, precomputed_dpo_trainer

from trainwright.callbacks import CheckpointGuardCallback
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

torch.set_num_threads(1)
FILE = ReferenceSyncCallback.CHECKPOINT_FILE


def _reference():
    return build_tiny_causal_lm(build_tokenizer(), hidden_size=16, num_layers=1, num_heads=2, seed=1)


def _nan(state):
    return {
        name: torch.full_like(t, float("nan")) if t.is_floating_point() else t for name, t in state.items()
    }


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda s: {"w": torch.zeros(3)}, "parameter names differ"),
        (
            lambda s: {n: t[..., :1].clone() if t.dim() else t for n, t in s.items()},
            "the reference model's is",
        ),
        (_nan, "holds NaN or infinite values"),
        (lambda s: [t for t in s.values()], "a list, not a state dict"),
    ],
)
def test_tr_dpo_reference_of_plain_tensors_is_checked(tmp_path, damage, why):
    reference = _reference()
    before = {n: t.clone() for n, t in reference.state_dict().items()}
    torch.save({"state_dict": damage(reference.state_dict()), "num_syncs": 3}, tmp_path / FILE)
    callback = ReferenceSyncCallback(reference)
    with pytest.warns(
        UserWarning, match="has an unusable .*continues from the reference it was built with"
    ) as rec:
        assert callback.load_checkpoint(str(tmp_path)) is False
    assert why in str(rec[0].message)
    assert callback.num_syncs == 0
    assert all(torch.equal(before[n], t) for n, t in reference.state_dict().items())


def test_tr_dpo_resume_from_an_all_nan_reference_trains_finite_weights(tmp_path):
    """End to end: a TR-DPO checkpoint whose blended reference was replaced by NaNs (re-marked complete)."""
    pytest.importorskip("datasets")
    run = tmp_path / "run"
    options = {"sync_ref_model": True, "ref_model_sync_steps": 1, "ref_model_mixup_alpha": 0.5}
    dpo_trainer(run, callbacks=[StopAt(2)], **options).train()
    checkpoint = run / "checkpoint-2"
    saved = torch.load(checkpoint / FILE, weights_only=True)
    torch.save({"state_dict": _nan(saved["state_dict"]), "num_syncs": saved["num_syncs"]}, checkpoint / FILE)
    CheckpointGuardCallback().mark_complete(checkpoint, 2)
    resumed = dpo_trainer(run, **options)
    with pytest.warns(UserWarning, match="holds NaN or infinite values"):
        resumed.train(resume_from_checkpoint=True)
    assert resumed.state.global_step == 4
    assert all(torch.isfinite(p).all() for p in resumed.model.parameters())
    assert all(math.isfinite(e["loss"]) for e in resumed.state.log_history if "loss" in e)


@pytest.mark.parametrize(
    "cached, why",
    [
        ({"chosen": torch.zeros(4)}, "no 1-D float tensor 'rejected'"),
        ({"chosen": torch.zeros(4), "rejected": torch.zeros(4, 2)}, "no 1-D float tensor 'rejected'"),
        ({"chosen": torch.full((4,), float("nan")), "rejected": torch.zeros(4)}, "NaN or infinite 'chosen'"),
        ({"chosen": torch.zeros(3), "rejected": torch.zeros(3)}, "has 3 rows, dataset has 4"),
        (torch.zeros(4), "holds a Tensor, not a dict"),
    ],
)
def test_dpo_reference_cache_of_plain_tensors_is_checked(tmp_path, cached, why):
    pytest.importorskip("datasets")
    precomputed_dpo_trainer(tmp_path / "out")
    (cache,) = (tmp_path / "out" / "ref_logps_cache").glob("*.pt")
    torch.save(cached, cache)
    with pytest.raises(RuntimeError, match="delete it to recompute") as error:
        precomputed_dpo_trainer(tmp_path / "out")
    assert why in str(error.value)
