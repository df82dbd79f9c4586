"""Which classes are Trainer subclasses: aliases, library bases, cross-file project bases, mixins."""

from __future__ import annotations

import ast
from pathlib import Path

from lint_helpers import codes, lint_snippet
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source
from trainwright_lint.project.layout import ImportRoots
from trainwright_lint.project.model import TRAINER, ProjectModel, project_key
from trainwright_lint.project.summary import summarise

PRIVATE = "    def _save_checkpoint(self, model, trial):\n        super()._save_checkpoint(model, trial)\n"


def _private_override_with(header: str, bases: str) -> list[str]:
    return codes(lint_snippet(f"{header}\n\nclass T({bases}):\n{PRIVATE}", select=["TW101"]))


def test_aliases_and_module_paths_resolve() -> None:
    assert _private_override_with("from transformers import Trainer", "Trainer") == ["TW101"]
    assert _private_override_with("from transformers import Trainer as HFTrainer", "HFTrainer") == ["TW101"]
    assert _private_override_with("import transformers as tf", "tf.Trainer") == ["TW101"]
    assert _private_override_with("import transformers", "transformers.Trainer") == ["TW101"]
    assert _private_override_with("from transformers.trainer import Trainer", "Trainer") == ["TW101"]
    assert _private_override_with("from transformers import Seq2SeqTrainer", "Seq2SeqTrainer") == ["TW101"]
    assert _private_override_with("from trl import DPOTrainer", "DPOTrainer") == ["TW101"]
    assert _private_override_with(
        "from sentence_transformers import SentenceTransformerTrainer", "SentenceTransformerTrainer"
    ) == ["TW101"]


def test_look_alikes_are_not_trainers() -> None:
    assert _private_override_with("from mylib import Trainer", "Trainer") == []  # not transformers'
    assert _private_override_with("from transformers import TrainerState", "TrainerState") == []
    assert _private_override_with("from transformers import TrainerCallback", "object") == []
    # setfit's Trainer is not built on transformers.Trainer: no catalogue-based rules for it.
    assert _private_override_with("from setfit import Trainer", "Trainer") == []


def test_same_file_base_and_mixin() -> None:
    code = (
        "from transformers import Trainer\n\n"
        "class Base(Trainer):\n    pass\n\n"
        "class Mixin:\n" + PRIVATE + "\n"
        "class Final(Mixin, Base):\n    pass\n"
    )
    (finding,) = lint_snippet(code, select=["TW101"])
    assert finding.class_name == "Mixin" and finding.line == 7


def test_extra_trainer_bases_from_config() -> None:
    code = f"from mylib import Runner\n\nclass T(Runner):\n{PRIVATE}"
    assert codes(lint_snippet(code, select=["TW101"])) == []
    assert codes(lint_snippet(code, select=["TW101"], trainer_bases=["mylib.Runner"])) == ["TW101"]
    assert codes(lint_snippet(code, select=["TW101"], trainer_bases=["Runner"])) == ["TW101"]


def test_relative_imports_lead_to_project_files(fixtures_dir: Path) -> None:
    child = fixtures_dir / "project" / "pkg" / "child.py"
    roots = ImportRoots(str(fixtures_dir / "project"))
    base = roots.find_relative(str(child), 1, "base")
    assert base is not None and base.path == str(fixtures_dir / "project" / "pkg" / "base.py")
    assert roots.find_relative(str(child), 1, "missing") is None
    absolute = roots.find_absolute(str(child), "pkg.base")
    assert absolute is not None and absolute.path == base.path
    assert roots.find_absolute(str(child), "transformers") is None  # always the library


def test_cross_file_bases_resolve_through_sibling_modules(fixtures_dir: Path) -> None:
    """flake8 mode: one file at a time, bases read from sibling modules on demand."""
    sub = fixtures_dir / "project" / "pkg" / "sub_trainer.py"
    findings = lint_source(
        sub.read_text(), str(sub), LintConfig(select=("TW101",), transformers_version="5.24.0")
    )
    assert [(f.code, f.class_name, f.line) for f in findings] == [("TW101", "SubTrainer", 5)]


def test_project_methods_are_not_private_overrides(fixtures_dir: Path) -> None:
    child = fixtures_dir / "project" / "pkg" / "child.py"
    # child.py never says "Trainer": the flake8 pre-filter skips it unless the base is configured.
    config = LintConfig(select=("TW1",), transformers_version="5.24.0")
    assert lint_source(child.read_text(), str(child), config) == []
    config = LintConfig(select=("TW1",), transformers_version="5.24.0", trainer_bases=("BaseRunner",))
    findings = lint_source(child.read_text(), str(child), config)
    assert [f.method for f in findings] == ["_get_train_sampler"]  # _project_helper is ours


def test_model_classifies_transitively(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    for name, code in {
        "p/__init__.py": "",
        "p/a.py": "from transformers import Trainer\nclass A(Trainer): pass\n",
        "p/b.py": "from p.a import A\nclass B(A): pass\nclass C(B): pass\n",
    }.items():
        (tmp_path / name).write_text(code)
    model = ProjectModel(str(tmp_path))
    for name in ("p/a.py", "p/b.py"):
        path = str(tmp_path / name)
        model.add(summarise(ast.parse((tmp_path / name).read_text()), path, (tmp_path / name).read_text()))
    c = model.info(project_key(str(tmp_path / "p/b.py"), "C"))
    assert c.role == TRAINER and c.catalog_cls == "Trainer"
    assert [k.rsplit("::", 1)[-1] for k in c.mro_keys] == ["C", "B", "A", "transformers.Trainer"]
    assert model.resolve(str(tmp_path / "p/b.py"), "Missing").kind == "unresolved"
