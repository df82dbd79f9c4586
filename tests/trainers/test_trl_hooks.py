"""Issue 37, item 4: a subclass overriding a TRL method our trainers never call is warned about, by name,
at construction; overrides of hooks we do call (and the examples' subclasses) are not."""

from __future__ import annotations

import ast
import importlib.util
import warnings
from pathlib import Path

import pytest
import torch
from datasets import Dataset

from trainwright import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer
from trainwright.trainers.common.trl_hooks import UnusedTRLOverrideWarning, unused_trl_overrides

torch.set_num_threads(1)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKENIZER = build_tokenizer()


def _model():  # type: ignore[no-untyped-def]
    return build_tiny_causal_lm(TOKENIZER, hidden_size=16, num_layers=1, num_heads=2)


def _grpo(cls, tmp_path):  # type: ignore[no-untyped-def]
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=2, num_generations=2, report_to=[],
                      use_cpu=True, max_completion_length=2)  # fmt: skip
    data = Dataset.from_dict({"prompt": ["a", "b"]})
    return cls(_model(), lambda completions, **kw: [0.0] * len(completions), args=args, train_dataset=data,
               processing_class=TOKENIZER)  # fmt: skip


class PortedGRPO(GRPOTrainer):
    """A TRL subclass ported by swapping its import: its private overrides would never run."""

    def _generate_and_score_completions(self, inputs):  # type: ignore[no-untyped-def]
        raise AssertionError("never called")

    def _compute_loss(self, model, inputs):  # type: ignore[no-untyped-def]
        raise AssertionError("never called")

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[no-untyped-def]
        raise AssertionError("never called")


class PublicHooksGRPO(GRPOTrainer):
    """Overrides only what our trainer calls, plus a helper of its own: nothing to warn about."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[no-untyped-def]
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    def log(self, logs, start_time=None):  # type: ignore[no-untyped-def]
        super().log(logs, start_time)

    def _my_helper(self):  # type: ignore[no-untyped-def]
        return 1


def test_private_trl_overrides_are_named_at_construction(tmp_path):
    with pytest.warns(UnusedTRLOverrideWarning) as record:
        _grpo(PortedGRPO, tmp_path)
    messages = sorted(str(w.message) for w in record if w.category is UnusedTRLOverrideWarning)
    assert len(messages) == 3
    for name, hint in [
        ("_calculate_rewards", "reward_funcs="),
        ("_compute_loss", "override compute_loss"),
        ("_generate_and_score_completions", "generation_backend="),
    ]:
        (message,) = [m for m in messages if f"PortedGRPO.{name} overrides" in m]
        assert "never calls" in message and hint in message


def test_dpo_override_of_trls_dpo_loss_is_named(tmp_path):
    class PortedDPO(DPOTrainer):
        def dpo_loss(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("never called")

    args = DPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, per_device_train_batch_size=2)
    data = Dataset.from_list([{"prompt": "Q?", "chosen": " yes", "rejected": " no"}] * 2)
    with pytest.warns(UnusedTRLOverrideWarning, match=r"PortedDPO\.dpo_loss .* loss_type="):
        PortedDPO(_model(), args=args, train_dataset=data, processing_class=TOKENIZER)


def test_public_hook_overrides_and_plain_trainers_warn_nothing(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedTRLOverrideWarning)
        _grpo(PublicHooksGRPO, tmp_path / "a")
        _grpo(GRPOTrainer, tmp_path / "b")


def _example_subclasses() -> list[tuple[Path, str]]:
    found = []
    for path in sorted(EXAMPLES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ClassDef) and any(
                ast.unparse(base).split(".")[-1] in ("GRPOTrainer", "DPOTrainer") for base in node.bases
            ):
                found.append((path, node.name))
    return found


@pytest.mark.parametrize(
    "path, name", _example_subclasses() or [pytest.param(None, None, marks=pytest.mark.skip)]
)
def test_examples_subclasses_never_warn(path, name):
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # examples train only under `if __name__ == "__main__"`
    cls = getattr(module, name)
    base = GRPOTrainer if issubclass(cls, GRPOTrainer) else DPOTrainer
    assert unused_trl_overrides(cls, base, f"{base.trl_name}Trainer") == []
