"""The project model on real folder layouts: classes resolve through Python's own import rules.

Each test writes a small project to disk and lints it as ``trainwright lint`` does (``lint_files``),
so module search, namespace packages, star imports and duplicate module names are exercised for real.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from trainwright_lint.configuration import LintConfig
from trainwright_lint.discovery import iter_python_files
from trainwright_lint.project.layout import clear_caches
from trainwright_lint.runner import LintResult, lint_files

TARGET = {"transformers_version": "5.24.0", "trl_version": "1.16.0", "file_timeout": 0}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, code in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    clear_caches()


def lint(root: Path, paths: list[str] | None = None) -> LintResult:
    config = LintConfig(root=root, **TARGET)  # type: ignore[arg-type]
    files = [str(p) for p in iter_python_files(paths or [str(root)], root)]
    named = [f for f in files if paths and f in paths]  # files named on the command line
    return lint_files(files, config, jobs=1, explicit=named)


def found(result: LintResult, root: Path) -> set[tuple[str, int, str]]:
    return {
        (str(Path(f.path).resolve().relative_to(root.resolve())), f.line, f.code) for f in result.findings
    }


def roles(result: LintResult) -> dict[str, str]:
    return {r.name: r.role for r in result.classes}


PRIVATE_OVERRIDE = """
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
"""


def test_namespace_package_bases_resolve(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "training/base.py": "from transformers import Trainer\n\nclass MyBase(Trainer):\n    pass\n",
            "training/child.py": "from training.base import MyBase\n\nclass Child(MyBase):"
            + PRIVATE_OVERRIDE,
        },
    )
    result = lint(tmp_path)
    assert roles(result) == {"MyBase": "trainer", "Child": "trainer"}
    assert ("training/child.py", 4, "TW101") in found(result, tmp_path)


def test_src_layout_bases_resolve(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='proj'\n",
            "src/proj/__init__.py": "",
            "src/proj/base.py": "from transformers import Trainer as HFTrainer\n\nclass Base(HFTrainer):\n    pass\n",
            "src/proj/train.py": "from proj.base import Base\n\nclass Run(Base):" + PRIVATE_OVERRIDE,
        },
    )
    assert ("src/proj/train.py", 4, "TW101") in found(lint(tmp_path), tmp_path)


def test_star_imports_follow_all_and_the_library_exports(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "lib/__init__.py": "",
            "lib/bases.py": """
                from transformers import Trainer

                __all__ = ["Exported"]

                class Exported(Trainer):
                    pass

                class Hidden(Trainer):
                    pass
            """,
            "lib/use.py": """
                from lib.bases import *
                from transformers.trainer import *

                class A(Exported):
                    def _save_checkpoint(self, model, trial):
                        super()._save_checkpoint(model, trial)

                class B(Trainer):
                    def _save_checkpoint(self, model, trial):
                        super()._save_checkpoint(model, trial)
            """,
        },
    )
    result = lint(tmp_path)
    assert {("lib/use.py", 5, "TW101"), ("lib/use.py", 9, "TW101")} <= found(result, tmp_path)
    assert roles(result)["A"] == roles(result)["B"] == "trainer"


def test_a_module_name_in_two_folders_resolves_to_the_importing_files_folder(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "llm/trainer.py": "from transformers import Trainer\n\nclass LLMTrainer(Trainer):\n    pass\n",
            "llm/run.py": "from trainer import LLMTrainer\n\nclass Run(LLMTrainer):" + PRIVATE_OVERRIDE,
            "vision/trainer.py": "class LLMTrainer:\n    pass\n",  # same module and class name, not a Trainer
            "vision/run.py": "from trainer import LLMTrainer\n\nclass Run(LLMTrainer):" + PRIVATE_OVERRIDE,
        },
    )
    result = lint(tmp_path)
    hits = found(result, tmp_path)
    assert ("llm/run.py", 4, "TW101") in hits
    assert not any(path.startswith("vision/") for path, _, _ in hits)


def test_mixin_chain_in_front_of_a_trl_base_checks_super_against_trl(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "rl/mixins.py": """
                class LoggingMixin:
                    def log(self, logs, start_time=None):
                        super().log(logs, start_time, extra=True)


                class MoreLogging(LoggingMixin):
                    pass
            """,
            "rl/trainer.py": """
                from trl import GRPOTrainer

                from rl.mixins import MoreLogging


                class MyGRPO(MoreLogging, GRPOTrainer):
                    pass
            """,
        },
    )
    result = lint(tmp_path)
    assert roles(result) == {"LoggingMixin": "mixin", "MoreLogging": "mixin", "MyGRPO": "trainer"}
    (stale,) = [f for f in result.findings if f.code == "TW302"]
    assert (
        "`GRPOTrainer.log(self, logs, start_time=None)` in trl 1.16.0 (as combined in `MyGRPO`)"
        in stale.message
    )


def test_try_except_import_candidates_and_type_checking_imports(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "m.py": """
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from mylib.typing_only import Anything

                try:
                    from fancy_missing_lib import FancyTrainer as Base
                except ImportError:
                    from transformers import Trainer as Base


                class T(Base):
                    def _save_checkpoint(self, model, trial):
                        super()._save_checkpoint(model, trial)
            """,
        },
    )
    assert ("m.py", 13, "TW101") in found(lint(tmp_path), tmp_path)


def test_keras_and_lightning_callbacks_are_not_trainer_callbacks(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "cb.py": """
                from keras.callbacks import Callback
                from lightning.pytorch.callbacks import Callback as LightningCallback
                from transformers import KerasMetricCallback


                class KerasPrinter(Callback):
                    def on_batch_end(self, batch, logs=None):
                        return logs


                class LightningPrinter(LightningCallback):
                    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                        return outputs


                class HFKeras(KerasMetricCallback):
                    def on_epoch_end(self, epoch, logs=None):
                        return logs
            """,
        },
    )
    result = lint(tmp_path)
    assert result.findings == [] and result.classes == []


def test_statistics_list_lookalikes_whose_bases_cannot_be_resolved(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "t.py": """
                from company_internal.training import FancyTrainer


                class MyTrainer(FancyTrainer):
                    def _save_checkpoint(self, model, trial):
                        pass


                class Helper(UndefinedBase):
                    pass
            """,
        },
    )
    result = lint(tmp_path)
    assert result.findings == []
    (record,) = result.unresolved
    assert record.name == "MyTrainer" and "company_internal.training.FancyTrainer" in record.role


def test_trainer_bases_option_resolves_an_unknown_library_base(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "t.py": "from company_internal.training import FancyTrainer\n\nclass MyTrainer(FancyTrainer):"
            + PRIVATE_OVERRIDE,
        },
    )
    config = LintConfig(root=tmp_path, trainer_bases=("company_internal.training.FancyTrainer",), **TARGET)  # type: ignore[arg-type]
    result = lint_files([str(tmp_path / "t.py")], config, jobs=1)
    assert [f.code for f in result.findings] == ["TW101"]


def test_bases_in_files_not_given_are_read_but_not_reported(tmp_path: Path) -> None:
    """pre-commit passes the changed file only: its base is read from disk, its findings are not."""
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "pkg/__init__.py": "",
            "pkg/base.py": "from transformers import Trainer\n\nclass Base(Trainer):" + PRIVATE_OVERRIDE,
            "pkg/sub.py": "from .base import Base\n\nclass Sub(Base):\n    def log(self, logs):\n        pass\n",
        },
    )
    result = lint(tmp_path, [str(tmp_path / "pkg" / "sub.py")])
    assert {(p, c) for p, _, c in found(result, tmp_path)} == {("pkg/sub.py", "TW301")}


def test_tw303_is_silent_when_the_project_provides_the_tokenizer(tmp_path: Path) -> None:
    reads_tokenizer = """
        from transformers import Trainer


        class ReadsTokenizer(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                pad = self.tokenizer.pad_token_id
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
    """
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "a/base.py": reads_tokenizer,
            "a/sub.py": """
                from base import ReadsTokenizer


                class WithTokenizer(ReadsTokenizer):
                    def __init__(self, *args, tokenizer=None, **kwargs):
                        super().__init__(*args, **kwargs)
                        self.tokenizer = tokenizer
            """,
            "b/base.py": reads_tokenizer,
            "b/factory.py": """
                from base import ReadsTokenizer


                def build(model, args, tok):
                    trainer = ReadsTokenizer(model=model, args=args)
                    trainer.tokenizer = tok
                    return trainer
            """,
            "c/base.py": reads_tokenizer,
        },
    )
    hits = found(lint(tmp_path), tmp_path)
    tw303 = {path for path, _, code in hits if code == "TW303"}
    assert tw303 == {"c/base.py"}  # a subclass assigns it (a/), a factory assigns it (b/), nobody does (c/)


def test_tw102_counts_references_and_never_reports_a_property(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname='x'\n",
            "t.py": """
                from transformers import Trainer


                class Selects(Trainer):
                    def prediction_loop(self, *args, **kwargs):
                        return super().evaluation_loop(*args, **kwargs)

                    def evaluate_all(self, legacy):
                        loop = self.prediction_loop if legacy else self.evaluation_loop
                        return loop(self.get_eval_dataloader(), "eval")


                class Property(Trainer):
                    @property
                    def create_optimizer_and_scheduler(self):
                        return None


                class Dead(Trainer):
                    def create_optimizer_and_scheduler(self, num_training_steps):
                        super().create_optimizer_and_scheduler(num_training_steps)
            """,
        },
    )
    tw102 = [(f.class_name, f.method) for f in lint(tmp_path).findings if f.code == "TW102"]
    assert tw102 == [("Dead", "create_optimizer_and_scheduler")]


def test_the_summary_tracks_only_the_attributes_the_enabled_rules_declare() -> None:
    """``x.tokenizer = tok`` is recorded because TW303 declares ``TRACKED_ATTRIBUTES``, not because the
    project model knows TW303: with TW303 off nothing is tracked, and another attribute is tracked
    when asked for."""
    import ast

    from trainwright_lint.engine import text_needs
    from trainwright_lint.project.summary import summarise

    source = (
        "def build(m, tok):\n    trainer = T(model=m)\n    trainer.tokenizer = tok\n    trainer.clock = 0\n"
    )
    tree = ast.parse(source)
    tracked = text_needs(LintConfig()).tracked
    assert tracked == ("tokenizer",)
    assert summarise(tree, "f.py", source, tracked=tracked).instance_stores == (
        ("tokenizer", "trainer", "T"),
    )
    assert text_needs(LintConfig(ignore=("TW303",))).tracked == ()
    assert summarise(tree, "f.py", source).instance_stores == ()
    assert summarise(tree, "f.py", source, tracked=("clock",)).instance_stores == (("clock", "trainer", "T"),)
