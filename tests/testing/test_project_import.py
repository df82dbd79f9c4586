"""The oracle imports a dev-split class inside its package, fits its own ``__init__`` and names why a
program cannot run (issue 32: 1 of 58 dev-split cases ran before, the rest failed on relative imports)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from trainwright.testing import _construct, _importer, reasons


def _project(root: Path, value: int) -> Path:
    """``root/src/pkg/trainer.py`` importing its neighbour relatively and its package by name."""
    package = root / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "util.py").write_text(f"VALUE = {value}\n")
    (package / "trainer.py").write_text("from .util import VALUE\nfrom pkg.util import VALUE as SAME\n")
    return package / "trainer.py"


def test_a_module_imports_inside_its_package_and_is_forgotten_after(tmp_path: Path) -> None:
    first, second = _project(tmp_path / "original", 1), _project(tmp_path / "fixed", 2)
    assert _importer.dotted_name(first, tmp_path / "original") == (
        tmp_path / "original" / "src",
        "pkg.trainer",
    )
    try:
        module = _importer.import_in_project(first, tmp_path / "original")
        assert (module.__name__, module.VALUE, module.SAME) == ("pkg.trainer", 1, 1)
    finally:
        _importer.forget(tmp_path / "original")
    assert "pkg" not in sys.modules and not any(str(tmp_path / "original") in p for p in sys.path)
    try:  # the fixed copy has the same dotted names: it loads from its own files
        assert _importer.import_in_project(second, tmp_path / "fixed").VALUE == 2
    finally:
        _importer.forget(tmp_path / "fixed")


def test_a_sibling_named_as_an_installed_package_does_not_shadow_it(tmp_path: Path) -> None:
    # transformer-vae: ``transformer_vae/sklearn.py`` says ``from sklearn import svm``
    package = tmp_path / "vae"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "colorsys.py").write_text("from colorsys import rgb_to_hsv\n")
    (package / "helpers.py").write_text("X = 5\n")
    (package / "trainer.py").write_text(
        "from vae.colorsys import rgb_to_hsv\nfrom helpers import X  # a sibling, as a script imports it\n"
    )
    sys.modules.pop("colorsys", None)  # found on the path, not in the cache
    try:
        module = _importer.import_in_project(package / "trainer.py", tmp_path)
        assert module.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0) and module.X == 5
    finally:
        _importer.forget(tmp_path)
    assert not any(str(tmp_path) in p for p in sys.path)


def test_relative_imports_without_init_files_use_a_namespace_package(tmp_path: Path) -> None:
    folder = tmp_path / "training"
    folder.mkdir()
    (folder / "helpers.py").write_text("X = 3\n")
    (folder / "trainer.py").write_text("from .helpers import X\n")
    assert _importer.dotted_name(folder / "trainer.py", tmp_path) == (tmp_path, "training.trainer")


class _Base:
    pass


class _Config(_Base):
    pass


class _OwnInit:
    def __init__(self, model, args: _Config | None = None, *, prox_mu, global_state) -> None: ...


class _FewerKeywords:
    def __init__(self, model, args=None, train_dataset=None) -> None: ...


def _files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_user_module_named_like_another_projects_package_loads_from_its_file(tmp_path: Path) -> None:
    """The dev split's SPPO leak: nixietune's ``querygen/train/trainer.py`` imports the namespace package
    ``nixietune.querygen``; forgetting it raised ``KeyError: 'nixietune'`` half-way (the namespace
    path is recomputed from its dropped parent), so open-unlearning's ``trainer`` package stayed in
    ``sys.modules`` and SPPO's ``sppo/trainer.py`` (the module ``trainer``) got it: "module 'trainer'
    has no attribute 'SPPOTrainer'"."""
    first = _files(
        tmp_path / "first",
        {
            "ns/__init__.py": "",
            "ns/child/leaf.py": "LEAF = 1\n",
            "trainer/__init__.py": "PACKAGE = True\n",
            "app/run.py": "import ns.child.leaf\nimport trainer\n",
        },
    )
    try:
        assert _importer.import_in_project(first / "app" / "run.py", first).trainer.PACKAGE
        assert type(sys.modules["ns.child"].__path__).__name__ == "_NamespacePath"
    finally:
        _importer.forget(first)
    assert not {"ns", "ns.child", "ns.child.leaf", "trainer", "run"} & set(sys.modules)
    second = _files(tmp_path / "second", {"sppo/trainer.py": "class SPPOTrainer:\n    pass\n"})
    sys.modules["trainer"] = None  # type: ignore[assignment]  # a blocked name, left by anyone
    try:
        assert _importer.import_in_project(second / "sppo" / "trainer.py", second).SPPOTrainer
    finally:
        _importer.forget(second)


def test_an_installed_package_that_shadows_the_users_module_is_named(tmp_path: Path) -> None:
    project = _files(tmp_path, {"tools/pytest.py": "MINE = 1\n"})  # `pytest` is imported and installed
    with pytest.raises(ImportError, match="a package of that name on the path shadows"):
        try:
            _importer.import_in_project(project / "tools" / "pytest.py", project)
        finally:
            _importer.forget(project)
    assert sys.modules["pytest"] is pytest


def test_a_required_argument_the_toy_run_lacks_is_named() -> None:
    with pytest.raises(_construct.NotRunnable, match="requires prox_mu, global_state"):
        _construct.fit(_OwnInit, {"model": 1, "args": 2})
    accepted, dropped = _construct.fit(
        _FewerKeywords, {"model": 1, "args": 2, "callbacks": [3], "data_collator": 4}
    )
    assert accepted == {"model": 1, "args": 2} and dropped == {"callbacks": [3], "data_collator": 4}
    assert _construct.arguments_class(_OwnInit, _Base) is _Config  # TRL's DPOConfig, say
    assert _construct.arguments_class(_FewerKeywords, _Base) is _Base


class _ArgsOnly(_OwnInit):  # a project's ``__init__(self, *args, **kwargs)`` over TRL's trainer
    def __init__(self, *args, **kwargs) -> None: ...


def test_the_arguments_class_is_read_from_the_nearest_annotated_init() -> None:
    assert _construct.arguments_class(_ArgsOnly, _Base) is _Config


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("original and fixed fail alike: ModuleNotFoundError: No module named 'wandb.sdk'", "(`wandb`)"),
        ("NotRunnable: X.__init__ requires reward_funcs, which the toy run cannot supply", "constructor"),
        ("TypeError: F.__init__() missing 2 required positional arguments: 'a' and 'b'", "constructor"),
        ("ImportError: cannot import name 'AdamW' from 'transformers.optimization' (/x)", "release does not"),
        (
            "TypeError: `train_dataset` must be a `Dataset` or `IterableDataset`, got `list`.",
            "datasets.Dataset",
        ),
        (reasons.CALL_SITE, "call-site"),
        ("AttributeError: type object '_BaseConfig' has no attribute '_VALID_DICT_FIELDS'", "TRL 1.16.0"),
        ("ModuleNotFoundError: No module named 'transformers.modeling_layers'", "release does not"),
        (
            "TypeError: stat: path should be string, bytes, os.PathLike or integer, not Qwen2ForCausalLM",
            "vLLM",
        ),
        (
            "UnboundLocalError: cannot access local variable 'output_ids' where it is not associated",
            "own format",
        ),
        (
            "RuntimeError: Failed to import m <- ModuleNotFoundError: No module named 'transformers.deepspeed'",
            "release does not",
        ),
        (
            "LookupError: Offline mode: run this script without TRANSFORMERS_OFFLINE first to download",
            "downloads",
        ),
        ("ValueError: mutable default <class 'X'> for field m is not allowed: use default_factory", "3.11"),
        (r"ValueError: No module matched with model\.layers\.7", "layer"),
        ("RuntimeError: something new", "other"),
    ],
)
def test_each_reason_has_a_named_kind(reason: str, kind: str) -> None:
    assert kind in reasons.kind(reason)


def test_a_missing_module_the_project_holds_is_its_own(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    assert "its own module `models`" in reasons.kind(
        "ModuleNotFoundError: No module named 'models'", tmp_path
    )


def test_an_error_raised_from_another_names_its_cause() -> None:
    """UVQA's lazy ``models`` package raised "Failed to import models.modeling_base because of the
    following error (look up to see its traceback)", and the matrix counted it as "other"."""
    try:
        try:
            raise ModuleNotFoundError("No module named 'transformers.deepspeed'")
        except ModuleNotFoundError as cause:
            raise RuntimeError(
                "Failed to import models.modeling_base because of the following error (look up to see its"
                " traceback):\nNo module named 'transformers.deepspeed'"
            ) from cause
    except RuntimeError as error:
        said = reasons.error_line(error)
    assert said == (
        "RuntimeError: Failed to import models.modeling_base"
        " <- ModuleNotFoundError: No module named 'transformers.deepspeed'"
    )
    assert reasons.kind(said) == "a name its transformers/TRL release does not have"
