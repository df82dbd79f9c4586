"""Other transformers releases for the oracle, installed beside (never instead of) the pinned one.

``ensure("4.46.3")`` returns ``<checkout>/.oracle/transformers-4.46.3`` (gitignored), installing it
there first with ``pip install --no-deps --target``: transformers, the tokenizers and huggingface_hub
its own ``Requires-Dist`` pins where the venv's miss them (``companions``: any release of the range can
be asked), what those need that the venv lacks altogether (huggingface_hub 1.x's httpx), and for a hub
before 1.0 ``requests`` and a ``datasets`` that works with it (the venv's ``datasets`` needs a newer
one): projects import it at module level, and TRL-shaped toy data is a ``datasets.Dataset``
(``trainwright.testing.families``). ``--no-deps`` keeps numpy, pyarrow, safetensors and the rest of the
pinned environment in charge: a second numpy on the path would break torch. A folder installed before a
companion was added gets just the missing ones. The child blocks ``datasets`` only where neither the
folder's nor the venv's imports (``datasets_importable``). A 4.x folder also gets the newest TRL
whose pins allow its transformers (``_TRL``), so a TRL-based project imports there: without it the
child saw the venv's TRL 1.16, which needs transformers 5.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

import trainwright

# What a release whose huggingface_hub pin is before 1.0 needs beside that hub: ``requests`` (which old
# huggingface_hub imports) and its own deps, and the newest datasets for huggingface_hub<1.0 (its pins:
# hub>=0.25,<2; dill<0.4.2 and multiprocess<0.70.20, which the venv's 0.4.1 and 0.70.19 meet); it
# imports httpx. TRL 1.16 asks for datasets>=4.7.0, which it meets too.
_HUB_0 = [
    "requests",
    "certifi",
    "urllib3",
    "charset_normalizer",
    "idna",
    "datasets==4.8.5",
    "httpx<1",
    "httpcore",
]
# The packages transformers checks at import (``dependency_versions_check``) whose pins move between
# releases: a release whose pin the venv's copy misses fails ``import transformers`` (the venv's
# tokenizers 0.23.3 fails 4.56.2's and 5.0.0's ``<=0.23.0``, its huggingface_hub 2.x 4.x's ``<1.0``).
# Read from each release's own ``Requires-Dist`` once it is installed, so any release of the range
# can be asked (``companions``), not only those a table was written for.
_CHECKED_AT_IMPORT = {"tokenizers": "tokenizers", "huggingface-hub": "huggingface_hub"}


# The newest TRL whose trainers train with each release (``Requires-Dist`` read from the wheels: 0.13
# to 0.17 need ``transformers>=4.46.0``, 0.18 ``>=4.50.0``). For 4.4x before 4.46 that is 0.11.4
# (``>=4.40.0``), not 0.12.2: 0.12 pins only ``<4.47.0`` but its trainers pass ``processing_class=`` to
# ``Trainer``, which 4.46 introduced, so every TRL trainer failed on 4.45.2. 0.11.4 takes ``tokenizer=``,
# which 0.16 removed: the last TRL where a project's ``DPOTrainer(tokenizer=tok)`` ran, the reference
# for its TW304 rename. Both import and train with the venv's accelerate and the folder's ``datasets``
# (``tests/testing/test_companions.py``).
# From 4.50 on, each window's newest TRL by the same reading (0.18 ``>=4.50.0``, 0.19 ``>=4.51.0``, 0.20
# ``>=4.53.2``, 0.22 ``>=4.55.0``; 0.23 and later ``>=4.56.1``, where the venv's TRL 1.16 serves).
_TRL = (
    (SpecifierSet(">=4.55,<4.56.2"), "trl==0.22.2"),
    (SpecifierSet(">=4.53.2,<4.55"), "trl==0.20.0"),
    (SpecifierSet(">=4.51,<4.53.2"), "trl==0.19.1"),
    (SpecifierSet(">=4.50,<4.51"), "trl==0.18.2"),
    (SpecifierSet(">=4.46,<4.50"), "trl==0.17.0"),
    (SpecifierSet(">=4.40,<4.46"), "trl==0.11.4"),
)


_OFFLINE = (
    "NewConnectionError",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "No matching distribution found",
    "Could not find a version that satisfies",
)


class ReleaseUnavailable(RuntimeError):
    """The release is not installed and pip could not install it (no network, or no such release)."""

    @property
    def offline(self) -> bool:
        """Whether pip failed for want of the package index (a test may skip then, and only then)."""
        return any(marker in str(self) for marker in _OFFLINE)


def oracle_root() -> Path:
    """Where extra releases live: ``$TRAINWRIGHT_ORACLE_DIR``, else ``.oracle`` of the source checkout."""
    if os.environ.get("TRAINWRIGHT_ORACLE_DIR"):
        return Path(os.environ["TRAINWRIGHT_ORACLE_DIR"])
    package = Path(trainwright.__file__).resolve().parent
    checkout = package.parent.parent if package.parent.name == "src" else Path.cwd()
    return checkout / ".oracle"


def release_dir(version: str, root: Path | None = None) -> Path:
    return (root or oracle_root()) / f"transformers-{version}"


def requirements(version: str, root: Path | None = None) -> list[str]:
    """What ``version``'s folder holds: transformers, the TRL that trains with it, and, once transformers
    is there, its companions (``companions``; pip requirement strings)."""
    trl = [req for spec, req in _TRL if version in spec][:1]
    return [f"transformers=={version}", *companions(release_dir(version, root)), *trl]


def companions(folder: Path) -> list[str]:
    """The pins of the transformers in ``folder`` (its ``Requires-Dist``) that transformers checks at
    import and the venv's packages miss, with what a huggingface_hub before 1.0 needs (``_HUB_0``);
    empty before transformers is installed there. The venv's copy stays in charge wherever it meets the
    pin: ``--no-deps`` puts nothing in the folder that the release does not need."""
    dist = folder / f"transformers-{_folder_version(folder)}.dist-info" / "METADATA"
    if not dist.is_file():
        return []
    needs: list[str] = []
    for line in dist.read_text().splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.partition(":")[2].strip())
        name = canonicalize_name(req.name)
        if req.marker is not None or name not in _CHECKED_AT_IMPORT or _venv_meets(name, req.specifier):
            continue
        needs.append(f"{_CHECKED_AT_IMPORT[name]}{req.specifier}")
        if name == "huggingface-hub" and _before_1(req.specifier):
            needs += _HUB_0
    return needs


def _folder_version(folder: Path) -> str:
    return folder.name.removeprefix("transformers-")


def _absent_dependencies(folder: Path, followed: set[str]) -> list[str]:
    """What the packages ``followed`` in ``folder`` require that neither the folder nor the venv has at
    all: ``--no-deps`` leaves it out (huggingface_hub 1.x imports httpx, which the venv's hub 2.x no
    longer needs). Only absent packages: a version the venv has stays in charge, as everywhere else
    here. Only the companions that replace a package of the venv are followed: in a venv without torch
    (CI's lint-only one) following TRL or datasets would put torch and numpy in a folder the full venv
    shares."""
    # each dist-info read afresh: importlib's path finder caches a folder's listing by its mtime
    found = [metadata.PathDistribution(info) for info in sorted(folder.glob("*.dist-info"))]
    have = {canonicalize_name(d.metadata["Name"]) for d in found}
    absent: list[str] = []
    for dist in (d for d in found if canonicalize_name(d.metadata["Name"]) in followed):
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            name = canonicalize_name(req.name)
            if name not in have and not _venv_has(name):
                have.add(name)
                absent.append(f"{name}{req.specifier}")
    return absent


def _name(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


def _venv_has(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def _before_1(specifier: SpecifierSet) -> bool:
    """Whether the pin caps huggingface_hub before 1.0 (4.x's ``<1.0``; 5.0's ``<2.0,>=1.3`` does not)."""
    return any(s.operator in ("<", "<=") and Version(s.version) <= Version("1.0") for s in specifier)


def _venv_meets(name: str, specifier: SpecifierSet) -> bool:
    return _venv_has(name) and specifier.contains(metadata.version(name), prereleases=True)


def missing(version: str, root: Path | None) -> list[str]:
    """The requirements of ``version``'s folder not yet installed there (all, when it is not complete)."""
    folder = release_dir(version, root)
    marker = folder / ".complete"
    if not (folder / "transformers" / "__init__.py").is_file() or not marker.is_file():
        return requirements(version, root)
    done = set(marker.read_text().split())
    return [p for p in requirements(version, root) if p not in done]


def installed(version: str, root: Path | None = None) -> bool:
    return not missing(version, root)


def has_datasets(folder: Path) -> bool:
    """Whether a release folder holds its own ``datasets`` (else the child hides the venv's)."""
    return (folder / "datasets" / "__init__.py").is_file()


def datasets_importable(folder: Path) -> bool:
    """Whether ``datasets`` imports beside the release in ``folder``: its own copy, or the venv's where
    that one admits the folder's huggingface_hub (5.0's hub 1.x meets the venv datasets' pin; 4.x's hub
    0.x does not, and those folders carry datasets 4.8.5). Elsewhere the child blocks it, so a project
    importing it fails with that name rather than deep inside the hub."""
    if has_datasets(folder):
        return True
    hub = next(folder.glob("huggingface_hub-*.dist-info"), None)
    if hub is None:
        return True  # the venv's own hub serves
    try:
        wanted = [Requirement(r) for r in metadata.requires("datasets") or []]
    except metadata.PackageNotFoundError:
        return False
    version = metadata.PathDistribution(hub).version
    pins = [r for r in wanted if r.marker is None and canonicalize_name(r.name) == "huggingface-hub"]
    return all(pin.specifier.contains(version, prereleases=True) for pin in pins)


def ensure(version: str, root: Path | None = None, timeout_s: float = 900) -> Path:
    """The folder holding transformers ``version``, installed now if needed; ``ReleaseUnavailable``
    (with pip's last lines) when it cannot be."""
    folder = release_dir(version, root)
    packages = missing(version, root)
    if not packages:
        return folder
    pip_target(folder, packages, f"transformers {version}", timeout_s)
    # transformers' own pins are known only now: install what the venv misses of them (a second step
    # only for a release installed just now, whose companions were unknown before)
    later = [p for p in companions(folder) if p not in packages]
    # the dependencies followed: those of a companion that replaces a package of the venv, then theirs
    followed = {name for name in map(_name, later) if _venv_has(name)}
    for _ in range(6):  # huggingface_hub 1.x's httpx, then httpcore, then h11
        if not later:
            break
        pip_target(folder, later, f"the companions of transformers {version}", timeout_s)
        packages, later = [*packages, *later], _absent_dependencies(folder, followed)
        followed |= set(map(_name, later))
    _drop_stale(folder, packages)
    (folder / ".complete").write_text(" ".join(requirements(version, root)) + "\n")
    return folder


def _drop_stale(folder: Path, packages: list[str]) -> None:
    """Remove the metadata of releases ``packages`` replaced in ``folder``: ``pip --target --upgrade``
    replaces ``trl/`` but leaves ``trl-0.12.2.dist-info`` beside the new one, and
    ``importlib.metadata.version("trl")`` may then name the old release."""
    for pin in (p for p in packages if re.fullmatch(r"[\w.-]+==[\w.]+", p)):  # exact pins (not ``==1.*``)
        name, wanted = pin.split("==")
        for info in folder.glob(f"{name.replace('-', '_')}-*.dist-info"):
            if info.name != f"{name.replace('-', '_')}-{wanted}.dist-info":
                shutil.rmtree(info)


def pip_target(
    folder: Path,
    packages: list[str],
    what: str,
    timeout_s: float,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> None:
    """``pip install --no-deps --target folder packages``; ``ReleaseUnavailable`` naming ``what`` (with
    pip's last lines) when pip fails or runs past ``timeout_s``. ``--no-deps`` keeps the venv's
    packages in charge: nothing the venv has is installed again."""
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", *options]
    try:
        done = subprocess.run(
            [*command, "--target", str(folder), *packages],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=None if env is None else {**os.environ, **env},
        )
    except subprocess.TimeoutExpired:
        raise ReleaseUnavailable(f"pip did not install {what} within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-6:])
        raise ReleaseUnavailable(f"pip could not install {what}: {tail}")


def declared_range(package: str, within: str) -> str:
    """``within`` narrowed to the transformers releases the installed ``package`` declares it works with
    (its ``Requires-Dist``, extras left out). TRL 1.16's own code is fixed and judged for
    ``>=4.56.2``, the range its maintainers target: on 4.46 TRL 1.16 does not even import."""
    for line in metadata.requires(package) or []:
        req = Requirement(line)
        if req.name == "transformers" and req.marker is None and req.specifier:
            return f"{within},{req.specifier}"
    return within


def range_floor(spec: str) -> str | None:
    """The oldest release a range allows, where it names one (its ``>=`` bound, the highest if several):
    the release that stands for the older ones asked of a matrix when they are out of the range."""
    bounds = [Version(s.version) for s in SpecifierSet(spec) if s.operator == ">="]
    return str(max(bounds)) if bounds else None
