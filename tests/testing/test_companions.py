"""Packages beside the venv for the oracle (issue 32): the dev split's projects import wandb, nltk,
librosa ... and TRL-based ones need a TRL their 4.x release loads. ``trainwright.testing.companions``
installs the first into ``.oracle/companions`` (last on the child's path), ``releases`` puts the newest
TRL whose pins admit a 4.x release into that release's folder. The real installs reuse a folder already
present and skip only when pip cannot reach the index."""

from __future__ import annotations

from importlib.metadata import distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from trainwright.testing import companions
from trainwright.testing.fixed import judged_spec
from trainwright.testing.oracle import run_specs
from trainwright.testing.releases import ReleaseUnavailable, ensure, requirements

PROGRAMS = Path(__file__).parent / "programs"


def _installed(install):  # type: ignore[no-untyped-def]
    try:
        return install()
    except ReleaseUnavailable as exc:
        if not exc.offline:
            raise
        pytest.skip(f"PyPI unreachable and nothing installed under .oracle/: {exc}")


def test_a_package_the_venv_has_is_reported_as_shadowed(tmp_path: Path) -> None:
    (tmp_path / "packaging").mkdir()  # the linter's own dependency: in every environment
    (tmp_path / "packaging" / "__init__.py").write_text("")
    (tmp_path / "own_helper.py").write_text("")
    (tmp_path / "bin").mkdir()  # console scripts, not a module
    assert companions.shadowed(tmp_path) == ["packaging"]


def test_a_folder_completed_before_a_package_was_added_gets_only_the_new_one(tmp_path: Path) -> None:
    assert companions.missing(tmp_path) == companions.requirements()
    where = companions.folder(tmp_path)
    where.mkdir(parents=True)
    (where / ".complete").write_text(" ".join(companions.requirements()[1:]) + "\n")
    assert companions.missing(tmp_path) == companions.requirements()[:1]


def test_each_4x_release_gets_a_trl_and_the_pinned_one_none() -> None:
    # 0.11.4, not 0.12.2: 0.12's trainers pass `processing_class=` to a Trainer 4.45 does not have
    # (tests/testing/test_reference_release.py trains TRL's DPOTrainer there)
    assert "trl==0.17.0" in requirements("4.46.3") and "trl==0.11.4" in requirements("4.45.2")
    assert not [r for r in requirements("5.24.0") if r.startswith("trl")]


@pytest.mark.parametrize("version", ["4.45.2", "4.46.3"])
def test_the_trl_of_a_release_folder_admits_that_release(version: str) -> None:
    folder = _installed(lambda: ensure(version))
    (trl,) = [d for d in distributions(path=[str(folder)]) if d.metadata["Name"] == "trl"]
    pins = [Requirement(r) for r in trl.requires or [] if r.startswith("transformers")]
    assert pins and all(version in pin.specifier for pin in pins if pin.marker is None), pins


@pytest.mark.slow
def test_the_companions_import_beside_the_trainer_and_shadow_nothing() -> None:
    pytest.importorskip("torch")  # the oracle trains: the `train` extra
    where = _installed(companions.ensure)
    assert companions.shadowed(where) == []
    assert companions.check(where) == ""


@pytest.mark.slow
def test_a_module_importing_the_companions_trains_only_with_them(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")  # the oracle trains: the `train` extra
    where = _installed(companions.ensure)
    monkeypatch.delenv(companions.ENV_VAR, raising=False)
    (without,) = run_specs([judged_spec(PROGRAMS / "uses_companions.py")])
    # without them each package is stood in for (``standins``) and the first use stops the run, named
    assert without.stand_ins == ("deepspeed", "jieba", "librosa", "nltk", "sentence_transformers", "wandb")
    errors = [without.error, *(p.error for p in without.phases)]
    assert any("uses `wandb.init`, and wandb is not installed here" in (e or "") for e in errors), errors
    monkeypatch.setenv(companions.ENV_VAR, str(where))
    (record,) = run_specs([judged_spec(PROGRAMS / "uses_companions.py")])
    assert not record.failed, record
    said = "@0 companions deepspeed jieba librosa nltk sentence_transformers wandb"
    assert any(line.startswith(said) for line in record.phase("ga1/train").lines), record  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_trl_project_trains_on_4_46_3_with_that_folders_trl() -> None:
    pytest.importorskip("torch")  # the oracle trains: the `train` extra
    release = _installed(lambda: ensure("4.46.3"))
    (record,) = run_specs([judged_spec(PROGRAMS / "trl_version.py", release=release)])
    assert record.release == "4.46.3" and not record.failed, record
    assert "@0 trl 0.17.0" in record.phase("ga1/train").lines  # type: ignore[union-attr]
