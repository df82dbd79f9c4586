"""``scripts/build_catalog.py``: the ``ast`` extraction on a synthetic release, and on the installed
transformers, whose regenerated slice must equal the committed data (nobody hand-edited it)."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers.json"


@pytest.fixture(scope="module")
def build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_catalog", ROOT / "scripts" / "build_catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRAINER = """
class Trainer:
    from .trainer_pt_utils import log_metrics, helper as renamed

    flag: bool = False

    def __init__(self, model=None):
        self.model = model

    def train(self, resume=None):
        loop = find_executable_batch_size(self._loop, 8, False)
        return loop(resume=resume)

    def _loop(self, batch_size=None, resume=None):
        self.dl = self.get_dataloader()
        for x in range(2):
            self.step(self.model, x, *extra, **more)
        callbacks.append(self.on_done)
        super().save()

    def get_dataloader(self):
        return self._make(self.ds, sampler_fn=self._sampler)

    def _make(self, ds, sampler_fn=None):
        return sampler_fn(ds) if sampler_fn else None

    def _sampler(self, dataset=None):
        return None

    def step(self, model, inputs, n=None):
        return self.loss(model, inputs, n=n)

    def loss(self, model, inputs, n=None):
        return self.size

    def on_done(self):
        pass

    def never(self, a, /, b, *args, c, d=2, **kw):
        pass

    @property
    def size(self):
        return 1

    @size.setter
    def size(self, value):
        pass

    @staticmethod
    def static(x, y=(None, None)):
        return x

    if HAS_X:
        def conditional(self):
            pass
"""
SEQ2SEQ = """
class Seq2SeqTrainer(Trainer):
    def loss(self, model, inputs, n=None, **gen):
        return super().loss(model, inputs, n=n)

    def extra(self):
        return self.static(1)
"""
PT_UTILS = """
def log_metrics(self, split, metrics):
    pass

def helper(self):
    pass
"""
CALLBACK = """
class TrainerControl:
    should_stop: bool = False
    should_log: bool = False

class TrainerCallback:
    def on_init_end(self, args, state, control, **kwargs):
        pass

    def on_log(self, args, state, control, logs=None, **kwargs):
        pass

class CallbackHandler(TrainerCallback):
    def on_init_end(self, args, state, control):
        return self.call_event("on_init_end", args, state, control)

    def on_log(self, args, state, control, logs):
        return self.call_event("on_log", args, state, control, logs=logs)

    def call_event(self, event, args, state, control, **kwargs):
        for cb in self.callbacks:
            getattr(cb, event)(args, state, control, model=self.model, **kwargs)
"""


@pytest.fixture(scope="module")
def release(build):  # type: ignore[no-untyped-def]
    sources = {
        "trainer.py": textwrap.dedent(TRAINER),
        "trainer_seq2seq.py": textwrap.dedent(SEQ2SEQ),
        "trainer_pt_utils.py": textwrap.dedent(PT_UTILS),
        "trainer_callback.py": textwrap.dedent(CALLBACK),
    }
    return build.extract_release(sources)


def test_definitions_kinds_and_parameters(release) -> None:  # type: ignore[no-untyped-def]
    methods = release["classes"]["Trainer"]
    assert set(methods) == {
        "log_metrics",
        "renamed",
        "__init__",
        "train",
        "_loop",
        "get_dataloader",
        "_make",
        "_sampler",
        "step",
        "loss",
        "on_done",
        "never",
        "size",
        "static",
        "conditional",
    }
    assert methods["size"]["kind"] == "property"  # the setter does not replace the getter
    assert methods["static"]["kind"] == "staticmethod"
    assert methods["static"]["params"] == [["x", 1, None], ["y", 1, "(None, None)"]]
    assert methods["renamed"]["params"] == [["self", 1, None]]
    assert methods["never"]["params"] == [
        ["self", 0, None],
        ["a", 0, None],
        ["b", 1, None],
        ["args", 2, None],
        ["c", 3, None],
        ["d", 3, "2"],
        ["kw", 4, None],
    ]


def test_call_sites_and_indirections(release) -> None:  # type: ignore[no-untyped-def]
    methods = release["classes"]["Trainer"]
    assert methods["step"]["calls"] == [["_loop", 2, [], 1, 1]]
    assert methods["loss"]["calls"] == [["step", 2, ["n"], 0, 0]]
    assert methods["_sampler"]["calls"] == [["_make", 1, [], 0, 0]]  # sampler_fn(ds)
    assert methods["_loop"]["calls"] == [
        ["train", 0, ["resume", "batch_size"], 0, 0]
    ]  # wrapper adds batch_size
    assert methods["on_done"]["calls"] == [] and methods["on_done"]["called"]  # passed as a value
    assert methods["size"]["called"]  # property read
    assert not methods["never"]["called"] and not methods["log_metrics"]["called"]


def test_subclass_folds_in_parent_and_ignores_super_calls(release) -> None:  # type: ignore[no-untyped-def]
    s2s = release["classes"]["Seq2SeqTrainer"]
    assert s2s["loss"]["owner"] == "Seq2SeqTrainer" and s2s["step"]["owner"] == "Trainer"
    assert s2s["loss"]["calls"] == [
        ["step", 2, ["n"], 0, 0]
    ]  # super().loss(...) is not a call of the override
    assert s2s["static"]["calls"] == [["extra", 1, [], 0, 0]]
    assert "extra" not in release["classes"]["Trainer"]


def test_events_and_control_flags(release) -> None:  # type: ignore[no-untyped-def]
    assert release["events"] == {"on_init_end": ["model"], "on_log": ["model", "logs"]}
    assert release["control_flags"] == ["should_stop", "should_log"]


def test_ranges_merge_only_consecutive_equal_values(build) -> None:  # type: ignore[no-untyped-def]
    values = {"1.0": "a", "1.1": "a", "1.2": None, "1.3": "a", "1.4": "b"}
    assert build.ranges(list(values), values.get) == [
        ["1.0", "1.1", "a"],
        ["1.3", "1.3", "a"],
        ["1.4", "1.4", "b"],
    ]


def test_installed_release_regenerates_to_the_committed_data(build, tmp_path) -> None:  # type: ignore[no-untyped-def]
    transformers = pytest.importorskip("transformers")
    version = transformers.__version__
    committed = json.loads(DATA.read_text(encoding="utf-8"))
    if version not in committed["versions"]:
        pytest.fail(
            f"installed transformers {version} is not catalogued; regenerate with scripts/build_catalog.py"
        )
    out = tmp_path / "one.json"
    build.main(
        ["--versions", "--source", f"{version}={Path(transformers.__file__).parent}", "--out", str(out)]
    )
    fresh = json.loads(out.read_text(encoding="utf-8"))
    view = {"classes": {}, "events": {}}
    for cls, methods in committed["classes"].items():
        view["classes"][cls] = {}
        for name, entry in methods.items():
            picked = {
                key: [r for r in spans if _covers(committed, r, version)] for key, spans in entry.items()
            }
            if picked["defs"]:
                view["classes"][cls][name] = {
                    k: [[version, version, *r[2:]] for r in v] for k, v in picked.items()
                }
    for cls, methods in fresh["classes"].items():
        assert methods == view["classes"][cls], cls
    for name, spans in fresh["events"].items():
        assert [s[2] for s in spans] == [
            s[2] for s in committed["events"][name] if _covers(committed, s, version)
        ]


def _covers(data, span, version) -> bool:  # type: ignore[no-untyped-def]
    index = data["versions"].index
    return index(span[0]) <= index(version) <= index(span[1])
