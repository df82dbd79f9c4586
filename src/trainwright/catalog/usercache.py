"""Releases newer than the shipped catalogue: extracted from their source, cached in the user cache folder.

Why: transformers ships a minor release every few weeks and TRL faster; a catalogue that lags by one
release gives silent wrong answers exactly when users upgrade. Two ways in, one extractor
(:mod:`trainwright.catalog.extract`, the builder's own code, which reads source with ``ast`` and never
imports it):

- the **installed** release, when it is newer than the catalogue: found through its ``.dist-info`` on
  ``sys.path`` (as :func:`trainwright.catalog.loader.installed_version` does), extracted on first use;
- ``trainwright catalog add VERSION``: a wheel from ``pip download --no-deps`` (pre-commit environments
  have no transformers installed); such a release stays covered for every later run.

Records live in ``<cache>/trainwright/catalog/<library>/<version>-<origin>-<hash>.json`` where ``<cache>``
is ``$XDG_CACHE_HOME``, else the platform's cache folder (``~/.cache``, ``~/Library/Caches``,
``%LOCALAPPDATA%``), and ``<hash>`` identifies the source: the sha256 of the wheel, or of the installed
distribution's ``RECORD`` (which lists the sha256 of every installed file), else of every ``.py`` file's
size and modification time. A changed source gets a new key, so a cached record is never stale. A record
also carries the extractor's :data:`EXTRACTOR_VERSION` and the fingerprint normaliser; one written by
another version is ignored and extracted again.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwright.catalog.distributions import metadata_folders
from trainwright.catalog.fingerprint import NORMALISER_VERSION
from trainwright.catalog.versions import version_key

# ``hashlib``, ``zipfile`` and the atomic writer are imported where a release newer than the catalogue
# is read or added: every lint run imports this module, and they cost it 6 ms of its start-up.

EXTRACTOR_VERSION = 1
LIBRARIES = ("transformers", "trl")
INSTALLED = "installed"
WHEEL = "wheel"
DATA_DIR = os.path.join(os.path.dirname(__file__), "data")


@dataclass(frozen=True)
class AddedRelease:
    """One release beyond the shipped catalogue and where its facts came from."""

    library: str
    version: str
    origin: str  # INSTALLED or WHEEL
    source: str  # the folder or wheel read
    record: dict[str, Any]  # the extractor's record in JSON form (see trainwright.catalog.additions)

    @property
    def provenance(self) -> str:
        """``5.25.0 from the installed source`` / ``5.25.0 from transformers-5.25.0-py3-none-any.whl``."""
        where = "the installed source" if self.origin == INSTALLED else os.path.basename(self.source)
        return f"{self.version} from {where}"


class ExtractionError(ValueError):
    """The source could not be read as a release of the library (the message names the file)."""


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/trainwright`` or the platform default (created on write, never on read)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        if sys.platform == "darwin":
            base = os.path.expanduser("~/Library/Caches")
        elif os.name == "nt":
            base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        else:
            base = os.path.expanduser("~/.cache")
    return Path(base) / "trainwright"


def library_dir(library: str) -> Path:
    return cache_root() / "catalog" / library


# --------------------------------------------------------------------------------------------- records


def _record_path(library: str, version: str, origin: str, digest: str) -> Path:
    return library_dir(library) / f"{version}-{origin}-{digest[:16]}.json"


def _read_record(path: Path) -> dict[str, Any] | None:
    """A cached record, or ``None`` when missing, unreadable or written by another extractor."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("extractor") != EXTRACTOR_VERSION
        or data.get("normaliser") != NORMALISER_VERSION
    ):
        return None
    return data


def _write_record(path: Path, data: dict[str, Any]) -> None:
    """Write through a temporary file and rename, so a concurrent reader never sees half a record; a
    read-only cache is not an error (the facts are then extracted again next run)."""
    from trainwright.storage.atomic import atomic_write_bytes  # only on a cache miss (see the top)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))
    except OSError:
        return


def added_releases(library: str, newest: str) -> list[AddedRelease]:
    """The ``catalog add`` records of ``library`` newer than ``newest``, one per version, ascending."""
    directory = library_dir(library)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found: dict[str, AddedRelease] = {}
    for name in names:
        version, _, rest = name.partition("-")
        if not rest.startswith(WHEEL + "-") or not name.endswith(".json") or version in found:
            continue
        try:
            newer = version_key(version) > version_key(newest)
        except ValueError:
            continue
        data = _read_record(directory / name) if newer else None
        if data is not None:
            found[version] = AddedRelease(library, version, WHEEL, data["source"], data["record"])
    return [found[v] for v in sorted(found, key=version_key)]


# ------------------------------------------------------------------------------------------- extraction


def extract(library: str, package: Any) -> dict[str, Any]:
    """The JSON record of one release read from ``package`` (a ``facts.Package``), with the builder's code.

    The extractor is imported here, not at the top: it is only needed the first time a newer release is
    seen, and every lint run imports this module (a pre-commit hook's start-up counts)."""
    from trainwright.catalog.additions import record_json
    from trainwright.catalog.extract import transformers_source, trl_source

    try:
        if library == "transformers":
            return record_json(transformers_source.extract_record(package))
        with open(os.path.join(DATA_DIR, "transformers-modules.json"), encoding="utf-8") as handle:
            modules = json.load(handle)
        with open(os.path.join(DATA_DIR, "transformers-arguments.json"), encoding="utf-8") as handle:
            fields = {f[0] for spans in json.load(handle)["fields"].values() for s in spans for f in s[2]}
        return record_json(trl_source.extract_record(package, modules, fields))
    except (LookupError, SyntaxError, UnicodeDecodeError, AssertionError) as exc:
        raise ExtractionError(f"{library}: cannot read its source ({type(exc).__name__}: {exc})") from exc


def _cached_or_extract(
    library: str, version: str, origin: str, source: str, digest: str, package_of: Any
) -> AddedRelease:
    path = _record_path(library, version, origin, digest)
    data = _read_record(path)
    if data is None:
        record = extract(library, package_of())
        data = {
            "extractor": EXTRACTOR_VERSION,
            "normaliser": NORMALISER_VERSION,
            "library": library,
            "version": version,
            "origin": origin,
            "source": source,
            "hash": digest,
            "record": record,
        }
        _write_record(path, data)
    return AddedRelease(library, version, origin, source, data["record"])


def add_wheel(library: str, wheel: Path) -> AddedRelease:
    """Extract a downloaded wheel of ``library`` into the cache (``trainwright catalog add``)."""
    import hashlib
    import zipfile

    from trainwright.catalog.extract.facts import Package  # see extract()

    name = wheel.name
    prefix = f"{library}-"
    if not (name.startswith(prefix) and name.endswith(".whl")):
        raise ExtractionError(f"{wheel}: not a {library} wheel (expected {library}-VERSION-....whl)")
    version = name[len(prefix) :].split("-", 1)[0]
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()

    def package() -> Any:
        try:
            return Package.from_wheel(wheel, library)
        except zipfile.BadZipFile as exc:
            raise ExtractionError(f"{wheel}: not a wheel ({exc})") from None

    return _cached_or_extract(library, version, WHEEL, str(wheel), digest, package)


# ------------------------------------------------------------------------------------- installed source


def installed_source(library: str) -> tuple[str, Path, Path] | None:
    """``(version, package folder, dist-info folder)`` of the installed ``library``, first on ``sys.path``;
    ``None`` when it is not installed as a plain folder (an editable install through an import hook)."""
    for entry, name in metadata_folders(library):
        if not name.endswith(".dist-info"):
            continue
        version = name[: -len(".dist-info")].partition("-")[2]
        folder = Path(entry) / library
        if not (folder / "__init__.py").is_file():
            return None
        return version, folder, Path(entry) / name
    return None


def source_digest(folder: Path, dist_info: Path) -> str:
    """sha256 of the distribution's ``RECORD`` (it lists every installed file's sha256), else of every
    ``.py`` file's path, size and modification time (an install without a RECORD)."""
    import hashlib  # see the top

    try:
        return hashlib.sha256((dist_info / "RECORD").read_bytes()).hexdigest()
    except OSError:
        pass
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def installed_release(library: str, newest: str) -> AddedRelease | None:
    """The installed ``library`` when it is newer than ``newest``: from the cache, else extracted now."""
    found = installed_source(library)
    if found is None:
        return None
    version, folder, dist_info = found
    try:
        if version_key(version) <= version_key(newest):
            return None
    except ValueError:
        return None
    digest = source_digest(folder, dist_info)
    return _cached_or_extract(library, version, INSTALLED, str(folder), digest, lambda: _from_dir(folder))


def _from_dir(folder: Path) -> Any:
    from trainwright.catalog.extract.facts import Package  # see extract(): only on a cache miss

    return Package.from_dir(folder)
