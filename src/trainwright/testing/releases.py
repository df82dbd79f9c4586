"""Other transformers releases for the oracle, installed beside (never instead of) the pinned one.

``ensure("4.46.3")`` returns ``<checkout>/.oracle/transformers-4.46.3`` (gitignored), installing it
there first with ``pip install --no-deps --target``: transformers, the tokenizers and huggingface_hub
it needs, ``requests`` (which old huggingface_hub imports), and a ``datasets`` that works with that
huggingface_hub (the venv's ``datasets`` needs a newer one): projects import it at module level, and
TRL-shaped toy data is a ``datasets.Dataset`` (``trainwright.testing.families``). ``--no-deps`` keeps
numpy, pyarrow, safetensors and the rest of the pinned environment in charge: a second numpy on the
path would break torch. A folder installed before a companion was added gets just the missing ones.
The child blocks ``datasets`` only for a folder without one. A 4.x folder also gets the newest TRL
whose pins allow its transformers (``_TRL``), so a TRL-based project imports there: without it the
child saw the venv's TRL 1.16, which needs transformers 5.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import trainwright

# What each release needs beside itself, read from its own pins (tokenizers, huggingface_hub).
_HUB_0 = [
    "huggingface_hub<1.0",
    "requests",
    "certifi",
    "urllib3",
    "charset_normalizer",
    "idna",
    # the newest datasets for huggingface_hub<1.0 (its pins: hub>=0.25,<2; dill<0.4.2 and
    # multiprocess<0.70.20, which the venv's 0.4.1 and 0.70.19 meet); it imports httpx. TRL 1.16 asks
    # for datasets>=4.7.0, which it meets too.
    "datasets==4.8.5",
    "httpx<1",
    "httpcore",
]
# First match wins. 4.56.2 is TRL 1.16's floor (``Requires-Dist: transformers>=4.56.2``): its pins are
# tokenizers>=0.22,<=0.23.0 (the venv's 0.23.3 fails its import-time check) and hub>=0.34,<1.0. The
# venv's TRL 1.16 and accelerate serve it; no TRL goes in its folder.
_COMPANIONS = (
    (SpecifierSet(">=4.56,<5"), ["tokenizers>=0.22,<=0.23.0", *_HUB_0]),
    (SpecifierSet("<5"), ["tokenizers<0.21", *_HUB_0]),
)


# The newest TRL whose trainers train with each release (``Requires-Dist`` read from the wheels: 0.13
# to 0.17 need ``transformers>=4.46.0``, 0.18 ``>=4.50.0``). For 4.4x before 4.46 that is 0.11.4
# (``>=4.40.0``), not 0.12.2: 0.12 pins only ``<4.47.0`` but its trainers pass ``processing_class=`` to
# ``Trainer``, which 4.46 introduced, so every TRL trainer failed on 4.45.2. 0.11.4 takes ``tokenizer=``,
# which 0.16 removed: the last TRL where a project's ``DPOTrainer(tokenizer=tok)`` ran, the reference
# for its TW304 rename. Both import and train with the venv's accelerate and the folder's ``datasets``
# (``tests/testing/test_companions.py``).
_TRL = (
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


def requirements(version: str) -> list[str]:
    """What ``version``'s folder holds: transformers and its companions (pip requirement strings)."""
    trl = [req for spec, req in _TRL if version in spec][:1]
    companions = next((pins for spec, pins in _COMPANIONS if version in spec), [])
    return [f"transformers=={version}", *companions, *trl]


def missing(version: str, root: Path | None) -> list[str]:
    """The requirements of ``version``'s folder not yet installed there (all, when it is not complete)."""
    folder = release_dir(version, root)
    marker = folder / ".complete"
    if not (folder / "transformers" / "__init__.py").is_file() or not marker.is_file():
        return requirements(version)
    done = set(marker.read_text().split())
    return [p for p in requirements(version) if p not in done]


def installed(version: str, root: Path | None = None) -> bool:
    return not missing(version, root)


def has_datasets(folder: Path) -> bool:
    """Whether a release folder holds its own ``datasets`` (else the child hides the venv's)."""
    return (folder / "datasets" / "__init__.py").is_file()


def ensure(version: str, root: Path | None = None, timeout_s: float = 900) -> Path:
    """The folder holding transformers ``version``, installed now if needed; ``ReleaseUnavailable``
    (with pip's last lines) when it cannot be."""
    folder = release_dir(version, root)
    packages = missing(version, root)
    if not packages:
        return folder
    pip_target(folder, packages, f"transformers {version}", timeout_s)
    _drop_stale(folder, packages)
    (folder / ".complete").write_text(" ".join(requirements(version)) + "\n")
    return folder


def _drop_stale(folder: Path, packages: list[str]) -> None:
    """Remove the metadata of releases ``packages`` replaced in ``folder``: ``pip --target --upgrade``
    replaces ``trl/`` but leaves ``trl-0.12.2.dist-info`` beside the new one, and
    ``importlib.metadata.version("trl")`` may then name the old release."""
    for pin in (p for p in packages if "==" in p):
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
