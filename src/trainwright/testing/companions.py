"""Packages the dev split's projects import that the venv lacks, installed beside it for the oracle.

Why: 12 of the dev split's 58 (file, class) cases stopped at ``import wandb`` (or ``nltk``, ``librosa``,
``sentence_transformers``, ``deepspeed``, ``jieba``) before training, so their fixes were never judged;
with those installed, 5 stopped at the next import (``torchmetrics``, ``omegaconf``, ``av``,
``lang_trans``); with ``info_nce`` and ``decord`` too, no dev case stops at a package PyPI has for this
machine (nixietune's two stop at their own constructor arguments, Mantis at a ``wandb`` API it removed).
The dev split's TW201/TW202 moves (``oracle_matrix.py --dev-split --moves``) stopped at two more,
``ruamel`` (GLM-4) and ``dataclasses_json`` (LLM-Blender): 3 of their 9 cases ran before them.
``ensure()`` installs them with ``pip install --no-deps --target <oracle root>/companions`` and the
oracle's child appends that folder to the *end* of ``sys.path`` (``on_path``, when
``$TRAINWRIGHT_COMPANIONS`` names it): the venv's own packages (numpy, torch, pyarrow ...) always come
first, and a transformers release folder (on ``PYTHONPATH``) too. Only what the import of each package
really loads is listed (``tests/testing/test_companions.py`` imports them all beside ``transformers.trainer``),
pinned, so a clean machine gets the same folder.

Not installed, on purpose: ``torchvision`` and ``torchaudio``. PyPI has only CUDA builds for the venv's
torch 2.13.0+cpu (torchvision 0.28.0 pins ``torch==2.13.0`` and links ``libtorch_cuda``; torchaudio
2.11.1's ``_torchaudio.so`` does not load), and a torchvision that fails to load breaks
``from transformers import Trainer`` itself, for every program (transformers imports it when it is
found). A project that needs them stays not runnable, with that reason.
"""

from __future__ import annotations

import importlib.machinery
import os
import site
import subprocess
import sys
from pathlib import Path

from trainwright.testing.releases import ReleaseUnavailable, oracle_root, pip_target

ENV_VAR = "TRAINWRIGHT_COMPANIONS"

#: What projects import (the name they import it by) and the pip requirement that provides it.
IMPORTS = {
    "wandb": "wandb==0.31.0",
    "nltk": "nltk==3.10.4",
    "librosa": "librosa==0.11.0",
    "sentence_transformers": "sentence-transformers==5.7.0",  # pins transformers>=4.41,<6: 4.x and 5.x
    "jieba": "jieba==0.42.1",
    "deepspeed": "deepspeed==0.19.8",
    # what those cases imported next, once the above were there
    "torchmetrics": "torchmetrics==1.9.0",
    "omegaconf": "omegaconf==2.4.0",
    "av": "av==18.1.0",
    "lang_trans": "lang-trans==0.6.0",
    # the last cases that stopped at an import of a package PyPI has for this machine
    "info_nce": "info-nce-pytorch==0.1.4",
    "decord": "decord==0.6.0",  # a manylinux wheel with its own CPU build of FFmpeg's decoders
    # what the dev split's TW201/TW202 moves stopped at (2026-12-07): GLM-4's two fine-tuning
    # scripts and LLM-Blender's ranker trainer
    "ruamel": "ruamel.yaml==0.19.1",
    "dataclasses_json": "dataclasses-json==0.6.7",
}

#: What importing them loads that the venv lacks (``sys.modules`` after importing them all).
DEPENDENCIES = (
    "protobuf==7.36.2",  # wandb
    "opentelemetry-api==1.45.3",
    "requests==2.34.2",
    "certifi==2026.10.19.post1",
    "urllib3==2.8.0",
    "charset-normalizer==3.5.3",
    "defusedxml==0.7.1",  # nltk
    "joblib==1.6.0",  # nltk, scikit-learn
    "lazy-loader==0.6",  # librosa
    "soundfile==0.14.0",
    "cffi==2.1.1",  # soundfile
    "soxr==1.1.0",
    "msgpack==1.2.4",  # librosa, deepspeed
    "scipy==1.17.1",  # librosa, sentence-transformers
    "scikit-learn==1.9.1",
    "threadpoolctl==3.8.0",  # scikit-learn
    "narwhals==2.29.0",
    "cloudpickle==3.1.3",
    "einops==0.8.2",  # deepspeed
    "hjson==3.1.0",
    "lightning-utilities==0.15.3",  # torchmetrics
    "marshmallow==3.26.2",  # dataclasses-json (<4)
    "typing-inspect==0.9.0",  # dataclasses-json; its mypy-extensions is the venv's (mypy)
)

#: Published only as a source distribution: built here against the venv's torch (no isolation, which
#: would download another torch) with no compiled ops (``DS_BUILD_OPS=0``); on a machine without CUDA
#: it imports with its CPU accelerator.
BUILT = {"deepspeed==0.19.8": {"DS_BUILD_OPS": "0"}}


def folder(root: Path | None = None) -> Path:
    return (root or oracle_root()) / "companions"


def requirements() -> list[str]:
    return [*IMPORTS.values(), *DEPENDENCIES]


def missing(root: Path | None = None) -> list[str]:
    """The requirements not yet installed in the folder (all, when it was never completed)."""
    marker = folder(root) / ".complete"
    done = set(marker.read_text().split()) if marker.is_file() else set()
    return [r for r in requirements() if r not in done]


def shadowed(where: Path) -> list[str]:
    """Top-level modules in ``where`` that the venv's ``site-packages`` already has.

    Appended last they would never load, but one there means the lists above are wrong: a dependency
    the venv already has was installed again, at another version."""
    names = set()
    for entry in where.iterdir():
        name = entry.name.split(".")[0] if entry.suffix in (".py", ".so") else entry.name
        if (
            name.isidentifier()
            and not name.startswith("__")
            and (entry.is_dir() or entry.suffix in (".py", ".so"))
        ):
            names.add(name)
    venv = site.getsitepackages()
    return sorted(n for n in names if importlib.machinery.PathFinder.find_spec(n, venv) is not None)


def check(where: Path, timeout_s: float = 300) -> str:
    """Import ``transformers.trainer`` and every package of ``IMPORTS`` in a fresh interpreter with
    ``where`` last on its path, as the oracle's child has it; the error's last line, empty when all
    import (a package transformers finds but cannot load breaks ``Trainer`` for every program)."""
    code = f"import sys; sys.path.append({str(where)!r})\nimport transformers.trainer\n" + "".join(
        f"import {name}\n" for name in IMPORTS
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "disabled", "DS_ACCELERATOR": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=timeout_s, env=env
    )
    said = done.stderr.strip().splitlines()
    return "" if done.returncode == 0 else (said[-1] if said else f"exit {done.returncode}")


def ensure(root: Path | None = None, timeout_s: float = 1800) -> Path:
    """The companions folder, installed (and checked) now if needed; ``ReleaseUnavailable`` when pip
    cannot install it, a package shadows the venv's, or the packages do not import."""
    where = folder(root)
    packages = missing(root)
    if not packages:
        return where
    plain = [p for p in packages if p not in BUILT]
    if plain:
        pip_target(where, plain, "the oracle's companion packages", timeout_s)
    for requirement, env in BUILT.items():
        if requirement in packages:
            options = ("--no-build-isolation",)
            pip_target(where, [requirement], requirement, timeout_s, options, env)
    if extra := shadowed(where):
        raise ReleaseUnavailable(f"{where} holds packages the venv already has: {', '.join(extra)}")
    if failed := check(where):
        raise ReleaseUnavailable(f"the companion packages in {where} do not import: {failed}")
    (where / ".complete").write_text(" ".join(requirements()) + "\n")
    return where


def on_path() -> None:
    """In the oracle's child: append ``$TRAINWRIGHT_COMPANIONS`` to ``sys.path`` (last: the venv and a
    release folder win) and keep wandb offline (a project's ``wandb.init`` gets a disabled run)."""
    where = os.environ.get(ENV_VAR)
    if where and where not in sys.path:
        sys.path.append(where)
        os.environ.setdefault("WANDB_MODE", "disabled")
        # deepspeed's accelerator, named: detecting it prints a warning once per process, to the first
        # program that imports it only, which the oracle would report as a difference in printed lines
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
