"""The catalogue entry for the installed transformers must match live introspection of that install.

This is the guard that the generated data (``scripts/build_catalog.py``, read with ``ast`` from wheels)
says what the real classes say: every method, its kind, visibility and signature, the callback events
and the kwargs ``CallbackHandler`` really passes, and the ``TrainerControl`` flags.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from typing import Any

import pytest

transformers = pytest.importorskip("transformers")

from trainwright.catalog import installed_version, load_catalog
from trainwright.catalog.loader import is_private


@pytest.fixture(scope="module")
def view():  # type: ignore[no-untyped-def]
    cat = load_catalog()
    installed = installed_version("transformers")
    assert installed == transformers.__version__, "package metadata disagrees with the imported module"
    resolved = cat.resolve_version(installed)
    if resolved != installed:
        pytest.fail(
            f"installed transformers {installed} is not a covered release (nearest: {resolved}); "
            "add it to scripts/build_catalog.py DEFAULT_VERSIONS and regenerate the catalogue"
        )
    return cat.at(installed)


def _live_methods(cls: type) -> dict[str, tuple[str, Any]]:
    """name -> (kind, function) for every callable defined on ``cls`` itself or inherited from a Trainer."""
    out: dict[str, tuple[str, Any]] = {}
    for klass in reversed([k for k in cls.__mro__ if k is not object]):
        for name, value in vars(klass).items():
            if isinstance(value, property):
                out[name] = ("property", value.fget)
            elif isinstance(value, staticmethod):
                out[name] = ("staticmethod", value.__func__)
            elif isinstance(value, classmethod):
                out[name] = ("classmethod", value.__func__)
            elif inspect.isfunction(value):
                out[name] = ("method", value)
    return out


def _params(func: Any) -> list[tuple[str, str, Any]]:
    return [
        (p.name, p.kind.name, p.default is not inspect.Parameter.empty)
        for p in inspect.signature(func).parameters.values()
    ]


@pytest.mark.parametrize("cls_name", ["Trainer", "Seq2SeqTrainer"])
def test_method_set_kind_and_visibility_match(view, cls_name: str) -> None:  # type: ignore[no-untyped-def]
    live = _live_methods(getattr(transformers, cls_name))
    catalogued = view.methods(cls_name)
    assert set(catalogued) == set(live), (
        f"only live: {sorted(set(live) - set(catalogued))}; only catalogue: {sorted(set(catalogued) - set(live))}"
    )
    for name, info in catalogued.items():
        assert info.kind == live[name][0], name
        assert info.private == is_private(name)
        owner = next(k.__name__ for k in getattr(transformers, cls_name).__mro__ if name in vars(k))
        assert info.owner == owner, name
    assert len(catalogued) > 90  # sanity: the 5.x Trainer has ~97 methods


@pytest.mark.parametrize("cls_name", ["Trainer", "Seq2SeqTrainer"])
def test_signatures_match(view, cls_name: str) -> None:  # type: ignore[no-untyped-def]
    live = _live_methods(getattr(transformers, cls_name))
    mismatches = []
    for name, info in view.methods(cls_name).items():
        if name not in live:
            mismatches.append(f"{name}: in the catalogue, not on the live class")
            continue
        func = live[name][1]
        live_params = list(inspect.signature(func).parameters.values())
        ours = info.signature.params
        if [(p.name, p.kind.name) for p in live_params] != [(p.name, p.kind) for p in ours]:
            mismatches.append(f"{name}: live {inspect.signature(func)} vs catalogue {info.signature.text}")
            continue
        for lp, cp in zip(live_params, ours):
            has_default = lp.default is not inspect.Parameter.empty
            if has_default != (cp.default is not None):
                mismatches.append(f"{name}.{lp.name}: default presence differs")
            elif has_default and ast.literal_eval(cp.default) != lp.default:
                mismatches.append(f"{name}.{lp.name}: default {lp.default!r} vs {cp.default}")
    assert not mismatches, "\n".join(mismatches)


def test_events_match_trainer_callback(view) -> None:  # type: ignore[no-untyped-def]
    live = {n for n in vars(transformers.TrainerCallback) if n.startswith("on_")}
    assert set(view.events) == live


def test_event_kwargs_match_what_the_handler_passes(view) -> None:  # type: ignore[no-untyped-def]
    """Fire every event through a real ``CallbackHandler`` and record the keyword arguments received."""
    received: dict[str, tuple[str, ...]] = {}

    class Recorder(transformers.TrainerCallback):
        pass

    def make_recorder(event: str):  # type: ignore[no-untyped-def]
        def record(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            received[event] = tuple(kwargs)

        return record

    for event in view.events:
        setattr(Recorder, event, make_recorder(event))
    handler = transformers.trainer_callback.CallbackHandler(
        [Recorder()], model=None, processing_class=None, optimizer=None, lr_scheduler=None
    )
    state, control = transformers.TrainerState(), transformers.TrainerControl()
    for event in view.events:
        method = getattr(handler, event)
        extra = {name: {} for name in list(inspect.signature(method).parameters)[3:] if name != "kwargs"}
        method(None, state, control, **extra)
    assert {e: tuple(sorted(info.kwargs)) for e, info in view.events.items()} == {
        e: tuple(sorted(k)) for e, k in received.items()
    }


def test_control_flags_match(view) -> None:  # type: ignore[no-untyped-def]
    live = tuple(f.name for f in dataclasses.fields(transformers.TrainerControl))
    assert view.control_flags == live
