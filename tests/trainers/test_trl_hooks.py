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


OUR_TRAINERS = ("GRPOTrainer", "DPOTrainer")


def _example_subclasses() -> list[tuple[Path, str]]:
    """Every class in examples/ that subclasses our trainers, directly or through another class of its file."""
    found = []
    for path in sorted(EXAMPLES.rglob("*.py")):
        trainers = set(OUR_TRAINERS)
        classes = [node for node in ast.walk(ast.parse(path.read_bytes())) if isinstance(node, ast.ClassDef)]
        for node in classes:  # in file order, so a subclass of a subclass is found too
            if any(ast.unparse(base).split(".")[-1] in trainers for base in node.bases):
                trainers.add(node.name)
                found.append((path, node.name))
    return found


EXAMPLE_SUBCLASSES = _example_subclasses()


def _example_class(path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> type:
    monkeypatch.syspath_prepend(str(path.parent))  # examples import their neighbours (grpo_toy, _progress)
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # examples train only under `if __name__ == "__main__"`
    cls = getattr(module, name)
    assert issubclass(cls, (GRPOTrainer, DPOTrainer)), f"{path.name}: {name} is not a trainwright trainer"
    return cls


def _construct_without_override_warning(cls: type, tmp_path: Path) -> None:
    """Build ``cls`` as a user would; an UnusedTRLOverrideWarning raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnusedTRLOverrideWarning)
        if issubclass(cls, GRPOTrainer):
            _grpo(cls, tmp_path)
        else:
            args = DPOConfig(
                output_dir=str(tmp_path), report_to=[], use_cpu=True, per_device_train_batch_size=2
            )
            data = Dataset.from_list([{"prompt": "Q?", "chosen": " yes", "rejected": " no"}] * 2)
            cls(_model(), args=args, train_dataset=data, processing_class=TOKENIZER)


def test_examples_hold_a_subclass_of_our_trainers():
    """The check below must have something to check: examples/grpo_anchored.py subclasses GRPOTrainer."""
    assert ("grpo_anchored.py", "AnchoredGRPOTrainer") in {(p.name, n) for p, n in EXAMPLE_SUBCLASSES}


@pytest.mark.parametrize(
    "path, name", EXAMPLE_SUBCLASSES, ids=[f"{p.stem}.{n}" for p, n in EXAMPLE_SUBCLASSES]
)
def test_examples_subclasses_never_warn(path, name, tmp_path, monkeypatch):
    cls = _example_class(path, name, monkeypatch)
    base = GRPOTrainer if issubclass(cls, GRPOTrainer) else DPOTrainer
    assert unused_trl_overrides(cls, base, f"{base.trl_name}Trainer") == []
    _construct_without_override_warning(cls, tmp_path)


@pytest.mark.parametrize("hook", ["_generate_and_score_completions", "_compute_loss", "_calculate_rewards"])
def test_the_examples_check_fails_on_a_private_override(hook, tmp_path, monkeypatch):
    """The check above is not vacuous: the example's class with one private TRL hook added fails it."""
    cls = _example_class(*EXAMPLE_SUBCLASSES[0], monkeypatch)
    ported = type(f"Ported{cls.__name__}", (cls,), {hook: lambda self, *args: None})
    with pytest.raises(UnusedTRLOverrideWarning, match=rf"Ported{cls.__name__}\.{hook} overrides"):
        _construct_without_override_warning(ported, tmp_path)


def test_anchored_example_trains_and_pulls_toward_the_start(tmp_path, monkeypatch):
    """examples/grpo_anchored.py runs on CPU, and its public compute_loss override is live: with a large λ the
    weights end nearer θ₀ than without (a private hook's override would change nothing)."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from grpo_anchored import train

    free, anchored = train(3, 0.0, tmp_path / "free"), train(3, 100.0, tmp_path / "anchored")
    assert [log["step"] for log in free] == [1, 2, 3] == [log["step"] for log in anchored]
    assert free[0]["anchor/distance"] == pytest.approx(anchored[0]["anchor/distance"])  # same first step
    assert anchored[-1]["anchor/distance"] < 0.5 * free[-1]["anchor/distance"]
