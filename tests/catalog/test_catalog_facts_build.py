"""``trainwright.catalog.extract.facts``: name resolution, exports, class graphs, dataclass fields and rename
detection on a synthetic package; and the installed release's facts regenerate to the committed data."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "trainwright" / "catalog" / "data"


def _load(name: str) -> ModuleType:
    """A maintainer script as a module (``scripts/`` on the path, as the scripts themselves expect)."""
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    return importlib.import_module(name)


@pytest.fixture(scope="module")
def facts() -> ModuleType:
    return importlib.import_module("trainwright.catalog.extract.facts")


FILES = {
    "pkg/__init__.py": """
        from typing import TYPE_CHECKING
        from .utils import OptionalDependencyNotAvailable, _LazyModule, is_torch_available

        _import_structure = {"callbacks": ["BaseCallback", "PrintCallback"], "args": ["MyArguments"]}
        _import_structure["models.bert"] = ["BertConfig"]
        try:
            if not is_torch_available():
                raise OptionalDependencyNotAvailable()
        except OptionalDependencyNotAvailable:
            _import_structure["utils.dummy"] = ["MyTrainer"]
        else:
            _import_structure["trainer"] = ["MyTrainer"]
            _import_structure["trainer"].extend(["SubTrainer"])
        if TYPE_CHECKING:
            from .trainer import MyTrainer
        else:
            import sys
            sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure)
    """,
    "pkg/utils.py": """
        class OptionalDependencyNotAvailable(Exception): ...
        class _LazyModule: ...
        def is_torch_available(): return True
    """,
    "pkg/callbacks.py": """
        __all__ = ["BaseCallback"]
        __all__ += ["PrintCallback"]
        class BaseCallback: ...
        class PrintCallback(BaseCallback): ...
        class HiddenCallback(BaseCallback): ...
    """,
    "pkg/args.py": """
        from dataclasses import dataclass, field
        from typing import ClassVar
        @dataclass
        class MyArguments:
            output_dir: str
            lr: float = 1e-3
            names: list = field(default_factory=list, metadata={"help": "names"})
            old_lr: float = field(default=None, metadata={"help": "Deprecated. Use `lr` instead."})
            flag: bool = field(default=False, init=False)
            counter: ClassVar[int] = 0
            def __post_init__(self):
                if self.old_lr is not None:
                    warnings.warn("`old_lr` is deprecated, use `lr` instead")
                    self.lr = self.old_lr
                if self.lr is None:
                    self.lr = self.output_dir  # a default, not a rename
    """,
    "pkg/trainer.py": """
        from . import callbacks
        from .callbacks import *
        from .callbacks import BaseCallback as Alias, PrintCallback
        from .args import MyArguments
        from external.lib import ExternalTrainer
        DEFAULT_CALLBACK = PrintCallback
        _private = PrintCallback
        class MyTrainer(ExternalTrainer):
            def __init__(self, model=None, tokenizer=None, processing_class=None):
                if tokenizer is not None:
                    warnings.warn("`tokenizer` is deprecated")
                    processing_class = tokenizer
        class SubTrainer(MyTrainer, callbacks.BaseCallback): ...
    """,
}


@pytest.fixture(scope="module")
def resolver(facts):  # type: ignore[no-untyped-def]
    sources = {name: textwrap.dedent(text).encode() for name, text in FILES.items()}
    files = {name: (lambda data=data: data) for name, data in sources.items()}
    package = facts.Package("pkg", files)
    return facts.Resolver(package, external=lambda dotted: "canon:" + dotted)


def test_lazy_package_exports(resolver) -> None:  # type: ignore[no-untyped-def]
    assert resolver.exports("pkg") == {
        "BaseCallback": "pkg.callbacks.BaseCallback",
        "MyArguments": "pkg.args.MyArguments",
        "MyTrainer": "pkg.trainer.MyTrainer",
        "PrintCallback": "pkg.callbacks.PrintCallback",
        "SubTrainer": "pkg.trainer.SubTrainer",
    }  # models.* and the dummy objects are left out


def test_all_and_public_names(resolver) -> None:  # type: ignore[no-untyped-def]
    assert resolver.exports("pkg.callbacks") == {
        "BaseCallback": "pkg.callbacks.BaseCallback",
        "PrintCallback": "pkg.callbacks.PrintCallback",
    }  # HiddenCallback is not in __all__
    exports = resolver.exports("pkg.trainer")
    assert exports["DEFAULT_CALLBACK"] == "pkg.callbacks.PrintCallback"  # an alias binding
    assert exports["Alias"] == "pkg.callbacks.BaseCallback"
    assert exports["ExternalTrainer"] == "canon:external.lib.ExternalTrainer"
    assert exports["MyArguments"] == "pkg.args.MyArguments"
    assert "_private" not in exports and "callbacks" not in exports


def test_class_graph(facts, resolver) -> None:  # type: ignore[no-untyped-def]
    graph = resolver.class_graph(["pkg.trainer.SubTrainer"])
    assert graph == {
        "pkg.callbacks.BaseCallback": [],
        "pkg.trainer.MyTrainer": ["canon:external.lib.ExternalTrainer"],
        "pkg.trainer.SubTrainer": ["pkg.trainer.MyTrainer", "pkg.callbacks.BaseCallback"],
    }
    assert facts.reaches(graph, "pkg.trainer.SubTrainer", frozenset({"canon:external.lib.ExternalTrainer"}))


def test_dataclass_fields_and_renames(facts, resolver) -> None:  # type: ignore[no-untyped-def]
    node = resolver.class_node("pkg.args.MyArguments")
    fields = facts.dataclass_fields(node)
    assert fields == [
        ["output_dir", None, None, 1],
        ["lr", "0.001", None, 1],
        ["names", None, "list", 1],
        ["old_lr", "None", None, 1],
        ["flag", "False", None, 0],
    ]
    names = {f[0] for f in fields}
    post_init = facts.method_nodes(node)["__post_init__"][0]
    found = facts.rename_evidence(post_init, names, on_self=True)
    assert [(o, n, e) for o, n, e, _ in found if e] == [("old_lr", "lr", True)]
    assert not any(o == "output_dir" for o, *_ in found)  # a default is not a rename
    assert facts.help_evidence(facts.field_help(node), names)[0][:3] == ("old_lr", "lr", False)
    init = facts.method_nodes(resolver.class_node("pkg.trainer.MyTrainer"))["__init__"][0]
    params = {"model", "tokenizer", "processing_class"}
    assert [r[:3] for r in facts.rename_evidence(init, params, on_self=False)] == [
        ("tokenizer", "processing_class", True)
    ]


def test_merged_ranges_and_fingerprint_layout(facts) -> None:  # type: ignore[no-untyped-def]
    versions = ["1.0", "1.1", "1.2"]
    per_release = {
        "1.0": {("pkg.T", "step"): ["aa", "bb"]},
        "1.1": {("pkg.T", "step"): ["aa", "cc"]},
        "1.2": {("pkg.T", "step"): ["aa", "bb"], ("pkg.T", "new"): ["dd"]},
    }
    doc = facts.merge_fingerprints("pkg", "test", versions, per_release)
    assert doc["methods"] == [["pkg.T", "new", [["1.2", "1.2"]]], ["pkg.T", "step", [["1.0", "1.2"]]]]
    assert doc["statements"] == {"aa": [1, 0, 2], "bb": [1, 0, 0, 1, 2, 2], "cc": [1, 1, 1], "dd": [0, 2, 2]}


def test_installed_release_facts_regenerate_to_the_committed_data(tmp_path) -> None:  # type: ignore[no-untyped-def]
    transformers = pytest.importorskip("transformers")
    version = transformers.__version__
    build = _load("build_catalog")
    committed = {
        fact: json.loads((DATA / f"transformers-{fact}.json").read_text(encoding="utf-8"))
        for fact in ("fingerprints", "modules", "arguments")
    }
    if version not in committed["modules"]["versions"]:
        pytest.fail(f"installed transformers {version} is not catalogued")
    out = tmp_path / "transformers.json"
    build.main(
        ["--versions", "--source", f"{version}={Path(transformers.__file__).parent}", "--out", str(out)]
    )
    fresh = {
        fact: json.loads((tmp_path / f"transformers-{fact}.json").read_text(encoding="utf-8"))
        for fact in ("fingerprints", "modules", "arguments")
    }

    def at(doc, spans):  # type: ignore[no-untyped-def]
        index = doc["versions"].index
        return [s[2] for s in spans if index(s[0]) <= index(version) <= index(s[1])]

    for module, names in fresh["modules"]["exports"].items():
        expected = {
            n: at(committed["modules"], s) for n, s in committed["modules"]["exports"][module].items()
        }
        assert {n: s[0][2] for n, s in names.items()} == {n: v[0] for n, v in expected.items() if v}, module
    for cls, spans in fresh["arguments"]["fields"].items():
        assert spans[0][2] == at(committed["arguments"], committed["arguments"]["fields"][cls])[0], cls

    def method_sets(doc, pick):  # type: ignore[no-untyped-def]
        out: dict[tuple[str, str], set[str]] = {}
        for fp, flat in doc["statements"].items():
            for i in range(0, len(flat), 3):
                if pick(flat[i + 1], flat[i + 2]):
                    cls, name, _ = doc["methods"][flat[i]]
                    out.setdefault((cls, name), set()).add(fp)
        return out

    i = committed["fingerprints"]["versions"].index(version)
    assert method_sets(fresh["fingerprints"], lambda a, b: True) == method_sets(
        committed["fingerprints"], lambda a, b: a <= i <= b
    )
