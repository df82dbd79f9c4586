"""Hand-written guidance must point at things that exist: catalogued events and methods, trainwright
reference callbacks, and evidence links; and it must cover the commonly overridden methods."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from trainwright.catalog import Catalog, load_catalog
from trainwright.catalog.guidance import _guidance
from trainwright.catalog.model import VERDICTS

CALLBACKS_DIR = Path(__file__).resolve().parents[2] / "src" / "trainwright" / "callbacks"

# The methods trainer_api.md §6.2 and the Trainer docs name as override points or common overrides.
COMMONLY_OVERRIDDEN = (
    "__init__",
    "compute_loss",
    "training_step",
    "prediction_step",
    "evaluate",
    "evaluation_loop",
    "log",
    "get_train_dataloader",
    "get_eval_dataloader",
    "_get_train_sampler",
    "create_optimizer",
    "create_scheduler",
    "create_optimizer_and_scheduler",
    "_save_checkpoint",
    "save_model",
    "_save",
    "_maybe_log_save_evaluate",
    "_inner_training_loop",
    "get_batch_samples",
    "_prepare_inputs",
    "_load_from_checkpoint",
    "_evaluate",
    "train",
    "predict",
    "_get_dataloader",
)


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog()


def _reference_callback_classes() -> set[str]:
    names: set[str] = set()
    for path in CALLBACKS_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names |= {n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Callback")}
    return names


def test_commonly_overridden_methods_all_have_guidance(cat: Catalog) -> None:
    missing = [name for name in COMMONLY_OVERRIDDEN if cat.guidance(name) is None]
    assert not missing
    assert len([n for n in cat.guidance_names() if not n.startswith("on_")]) >= 25


def test_guidance_references_exist(cat: Catalog) -> None:
    newest = cat.at()
    callbacks = _reference_callback_classes()
    problems = []
    for name in cat.guidance_names():
        g = cat.guidance(name)
        assert g.verdict in VERDICTS
        assert g.summary and g.summary[-1] in ".)", name
        if not (cat.ever_defined(name) or cat.event_history(name) is not None):
            problems.append(f"{name}: neither a catalogued method nor an event")
        problems += [f"{name}: unknown event {e}" for e in g.events if cat.event_history(e) is None]
        problems += [
            f"{name}: {m} is not a public Trainer method"
            for m in g.public_methods
            if newest.method(m) is None or newest.method(m).private
        ]
        problems += [f"{name}: no reference callback {c}" for c in g.callbacks if c not in callbacks]
        problems += [f"{name}: bad evidence link {u}" for u in g.evidence if not u.startswith("https://")]
        if g.verdict == "callback" and not g.events:
            problems.append(f"{name}: verdict 'callback' without an event")
    assert not problems, "\n".join(problems)


def test_every_current_method_has_a_purpose(cat: Catalog) -> None:
    assert [n for n in cat.at().methods() if not cat.purpose(n)] == []


def test_every_event_has_an_order_and_a_firing_point(cat: Catalog) -> None:
    orders = {}
    for name in cat.event_names():
        event = cat.event_history(name)
        assert event.fires, name
        orders[name] = event.order
    assert len(set(orders.values())) == len(orders)
    # firing order observed in trainer_api.md §2.1
    loop = [
        "on_train_begin",
        "on_epoch_begin",
        "on_step_begin",
        "on_substep_end",
        "on_pre_optimizer_step",
        "on_optimizer_step",
        "on_step_end",
        "on_log",
        "on_evaluate",
        "on_save",
        "on_epoch_end",
        "on_train_end",
    ]
    assert sorted(loop, key=orders.__getitem__) == loop


def test_malformed_guidance_is_rejected_with_its_name() -> None:
    with pytest.raises(ValueError, match="guidance for 'x': verdict 'maybe'"):
        _guidance("x", {"verdict": "maybe", "summary": "s."})
    with pytest.raises(ValueError, match="'events' must be a list of strings"):
        _guidance("x", {"verdict": "callback", "summary": "s.", "events": "on_log"})
