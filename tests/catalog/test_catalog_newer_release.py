"""Releases newer than the catalogue (issue 34): the extractor in the package gives the shipped entries,
an installed newer release is checked and named, ``catalog add`` covers one in an environment without
transformers, and every way of reaching past the catalogue says so once.

The newer-release tests run on a copy of the package whose catalogue lags one release (``lagging.py``):
the situation on the day a release ships. Those that need transformers 5.25.0 fetch it with
``pip download --no-deps`` (skipped, with the reason, when the package index cannot be reached).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lagging import ROOT, lagging_package, read, without_newest

from trainwright.catalog import usercache
from trainwright.catalog.additions import APPENDERS, append_release, facts_at, release_at
from trainwright.catalog.extract.facts import Package

NEW = "5.25.0"  # the release the lagging catalogue lacks
PROJECT_PYPROJECT = '[project]\nname = "demo"\nversion = "0.1"\ndependencies = ["transformers>=4.46,<5.26"]\n'
RESUMING = """\
from transformers import Trainer


class ResumingTrainer(Trainer):
    def get_resumed_dataloader(self, dataloader, num_batches):
        return super().get_resumed_dataloader(dataloader, num_batches)
"""


def _normalised_facts(record: dict[str, Any]) -> dict[str, Any]:
    """A fresh record's facts in the form :func:`facts_at` reads back (rename notes are not kept)."""
    facts = record["facts"]
    modules = facts["modules"]
    return {
        "fingerprints": sorted(facts["fingerprints"]),
        "modules": {
            "exports": {m: n for m, n in modules["exports"].items() if n},
            "classes": modules["classes"],
        },
        "arguments": {
            "fields": facts["arguments"]["fields"],
            "renames": sorted({(c, o, n) for c, o, n, *_ in facts["arguments"]["renames"]}),
        },
    }


def _shipped_facts(library: str) -> dict[str, Any]:
    docs = read(library)
    return {fact: docs[fact] for fact in ("fingerprints", "modules", "arguments")}


# ------------------------------------------------------------ (a) the extractor gives the shipped entries


@pytest.mark.parametrize("library", ["transformers", "trl"])
def test_the_installed_release_extracts_to_the_shipped_entries(library: str) -> None:
    found = usercache.installed_source(library)
    if found is None:
        pytest.skip(f"{library} is not installed as a plain folder")
    version, folder, _ = found
    shipped = read(library)
    assert version in shipped[""]["versions"], f"installed {library} {version} is not catalogued"
    record = usercache.extract(library, Package.from_dir(folder))
    assert release_at(shipped[""], version)["classes"] == record["release"]["classes"]
    if library == "transformers":
        expected = release_at(shipped[""], version)
        assert (expected["events"], expected["control_flags"]) == (
            record["release"]["events"],
            record["release"]["control_flags"],
        )
    got = _normalised_facts(record)
    want = facts_at(_shipped_facts(library), version)
    want["arguments"]["renames"] = sorted(tuple(r) for r in want["arguments"]["renames"])
    assert got == want


def test_appending_a_release_read_back_from_the_catalogue_restores_it() -> None:
    """Offline check of the append: drop the newest release, append it again from what the shipped
    documents say about it, get the shipped main document and the same facts back."""
    shipped = read()
    newest = shipped[""]["versions"][-1]
    lagging = without_newest(shipped)
    assert lagging[""]["versions"][-1] != newest
    append_release(lagging[""], newest, release_at(shipped[""], newest))
    assert lagging[""] == shipped[""]
    facts = facts_at(_shipped_facts("transformers"), newest)
    for fact in ("fingerprints", "modules"):
        value = [list(f) for f in facts[fact]] if fact == "fingerprints" else facts[fact]
        APPENDERS[fact](lagging[fact], newest, value)
    assert lagging["modules"] == shipped["modules"]
    assert (
        facts_at({**_shipped_facts("transformers"), "fingerprints": lagging["fingerprints"]}, newest)[
            "fingerprints"
        ]
        == facts["fingerprints"]
    )


# ------------------------------------------------------------------------------------ 5.25.0 from PyPI


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    into = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"transformers=={NEW}", "-d", str(into)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    wheels = sorted(into.glob(f"transformers-{NEW}-*.whl"))
    if done.returncode != 0 or not wheels:
        pytest.skip(
            f"cannot download transformers {NEW} from the package index (offline?): {done.stderr[-300:]}"
        )
    return wheels[0]


@pytest.fixture(scope="module")
def site_new(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """transformers 5.25.0 installed beside the pinned one (``pip install --target``, no dependencies: the
    extractor only reads the source)."""
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return site


@pytest.fixture(scope="module")
def lagging_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return lagging_package(tmp_path_factory.mktemp("lagging"))


def test_the_wheel_appended_to_the_lagging_catalogue_is_the_shipped_catalogue(wheel: Path) -> None:
    """The run-time route (extract + append) and the builder agree on the new release, bit for bit."""
    record = usercache.extract("transformers", Package.from_wheel(wheel, "transformers"))
    record = json.loads(json.dumps(record))
    shipped = read()
    lagging = without_newest(shipped)
    append_release(lagging[""], NEW, record["release"])
    for fact, append in APPENDERS.items():
        append(lagging[fact], NEW, record["facts"][fact])
    assert lagging == shipped


def _cli(
    args: list[str], cwd: Path, pythonpath: list[Path], cache: Path, **kw: Any
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # one line per statement
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [*pythonpath, ROOT / "plugin"])
    env["XDG_CACHE_HOME"] = str(cache)
    module = kw.pop("module", "trainwright_lint")
    return subprocess.run(
        [sys.executable, *kw.pop("python_flags", []), "-m", module, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PROJECT_PYPROJECT)
    (root / "train.py").write_text(RESUMING)
    return root


def test_an_installed_newer_release_is_checked_and_named(
    site_new: Path, lagging_src: Path, tmp_path: Path
) -> None:
    """Acceptance (b): ``>=4.46,<5.26`` with 5.25.0 installed and a catalogue ending at 5.24.0."""
    project = _project(tmp_path / "project")
    cache = tmp_path / "cache"
    first = _cli(["lint", "--select", "TW102"], project, [site_new, lagging_src], cache)
    assert first.returncode == 1, first.stderr
    assert "train.py:5:5: TW102" in first.stdout and "get_resumed_dataloader" in first.stdout
    assert "4.46.0–5.24.0" in first.stdout  # where the override never runs
    last = first.stderr.strip().splitlines()[-1]
    assert f"→ 4.46.0–{NEW}, {NEW} from the installed source" in last
    (record,) = (cache / "trainwright" / "catalog" / "transformers").glob(f"{NEW}-installed-*.json")
    stamp = record.stat().st_mtime_ns
    second = _cli(["lint", "--select", "TW102"], project, [site_new, lagging_src], cache)
    assert (second.stdout, second.stderr) == (first.stdout, first.stderr)
    assert record.stat().st_mtime_ns == stamp  # read from the cache, not extracted again
    explained = _cli(["explain", "get_resumed_dataloader"], project, [site_new, lagging_src], cache)
    assert explained.returncode == 0, explained.stderr
    text = " ".join(explained.stdout.split())  # explain fits its text to 80 columns
    assert "Trainer.get_resumed_dataloader" in text and f"{NEW} from the installed source" in text
    assert "NOT DEFINED on 4.46.0–5.24.0" in text


def test_nothing_is_extracted_when_the_installed_release_is_catalogued(
    site_new: Path, tmp_path: Path
) -> None:
    project = _project(tmp_path / "project")
    cache = tmp_path / "cache"
    done = _cli(["lint", "--select", "TW102"], project, [site_new, ROOT / "src"], cache)
    assert done.returncode == 1 and "get_resumed_dataloader" in done.stdout  # shipped since 5.25.0
    assert "→ 4.46.0–5.25.0" in done.stderr and "from the installed source" not in done.stderr
    assert not (cache / "trainwright").exists()


def _site_without_transformers(into: Path) -> Path:
    """The venv's site-packages without transformers (links to everything else), for ``python -S``."""
    site = next(Path(p) for p in sys.path if p.endswith("site-packages") and (Path(p) / "libcst").is_dir())
    into.mkdir()
    for entry in site.iterdir():
        if not entry.name.lower().startswith("transformers"):
            (into / entry.name).symlink_to(entry)
    return into


def test_catalog_add_covers_a_release_without_transformers_installed(
    wheel: Path, lagging_src: Path, tmp_path: Path
) -> None:
    """Acceptance (c): a pre-commit-like environment (no transformers), ``catalog add 5.25.0`` fetches the
    wheel with ``pip download --no-deps`` and the next lint covers 5.25.0."""
    site = _site_without_transformers(tmp_path / "site")
    project = _project(tmp_path / "project")
    cache = tmp_path / "cache"
    path = [lagging_src, site]
    probe = _cli(["catalog", "list"], project, path, cache, python_flags=["-S"])
    assert probe.returncode == 0 and "transformers: 84 releases shipped, 4.36.0–5.24.0" in probe.stdout
    added = _cli(["catalog", "add", NEW], project, path, cache, python_flags=["-S"])
    if added.returncode != 0 and "pip download" in added.stderr:
        pytest.skip(f"pip download failed in the scratch environment: {added.stderr[-300:]}")
    assert added.returncode == 0, added.stderr
    assert f"covered transformers {NEW} from transformers-{NEW}-" in added.stderr
    listed = _cli(["catalog", "list"], project, path, cache, python_flags=["-S"])
    assert f"transformers: {NEW} from transformers-{NEW}-py3-none-any.whl" in listed.stdout
    linted = _cli(["lint", "--select", "TW102"], project, path, cache, python_flags=["-S"])
    assert linted.returncode == 1 and "get_resumed_dataloader" in linted.stdout
    assert f"→ 4.46.0–{NEW}, {NEW} from transformers-{NEW}-py3-none-any.whl" in linted.stderr


# ------------------------------------------------------------------------ (d) never silent, offline


def _broken_install(site: Path, version: str) -> Path:
    """An installed transformers newer than the catalogue whose source cannot be read (no trainer.py)."""
    (site / f"transformers-{version}.dist-info").mkdir(parents=True)
    (site / f"transformers-{version}.dist-info" / "METADATA").write_text(
        f"Name: transformers\nVersion: {version}\n"
    )
    (site / "transformers").mkdir()
    (site / "transformers" / "__init__.py").write_text("")
    return site


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": warning: " in line]


def test_a_range_admitting_an_unreadable_installed_release_warns_once(tmp_path: Path) -> None:
    site = _broken_install(tmp_path / "site", "5.26.0")
    project = _project(tmp_path / "project")
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace("<5.26", "<5.27"))
    done = _cli(["lint", "--select", "TW1"], project, [site, ROOT / "src"], tmp_path / "cache")
    (warning,) = [w for w in _warnings(done.stderr) if "5.26.0" in w]
    assert "admits 5.26.0 (installed)" in warning and "could not be read" in warning
    assert "`trainwright catalog add 5.26.0`" in warning
    assert "→ 4.46.0–5.25.0" in done.stderr.splitlines()[-1]


def test_a_pin_past_the_catalogue_warns_once_with_how_to_cover_it(tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace(">=4.46,<5.26", "==5.26.0"))
    done = _cli(["lint", "--select", "TW1"], project, [ROOT / "src"], tmp_path / "cache")
    (warning,) = _warnings(done.stderr)
    assert "==5.26.0 (pyproject.toml) is newer than the catalogue" in warning
    assert "`trainwright catalog add 5.26.0`" in warning and "checking 5.25.0" in warning


def test_upgrade_past_the_catalogue_echoes_the_typed_release_and_warns(tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace(">=4.46,<5.26", ">=4.46,<4.48"))
    done = _cli(["upgrade", "--to", "5.26.0"], project, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode in (0, 1), done.stderr
    assert "moving to 5.26.0 (checked as 5.25.0, the newest covered release)" in done.stdout
    (warning,) = _warnings(done.stderr)
    assert "5.26.0" in warning and "`trainwright catalog add 5.26.0`" in warning
    # From a range that already reaches the newest covered release: the error names what was typed.
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace(">=4.46,<5.26", ">=5.0"))
    done = _cli(["upgrade", "--to", "5.26.0"], project, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode == 2
    assert "--to 5.26.0:" in done.stderr and "`trainwright catalog add 5.26.0`" in done.stderr
    assert "5.25.0 is not newer than 5.25.0" not in done.stderr


def test_upgrade_to_a_release_the_range_already_has_is_not_an_error(tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace(">=4.46,<5.26", ">=5.0"))
    done = _cli(["upgrade", "--to", "5.24.0"], project, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert "transformers 5.24.0 is already in the current target" in done.stderr


def test_the_readme_upgrade_example_works_on_the_readme_project(tmp_path: Path) -> None:
    """The README's ``upgrade --to`` line, run on the README's own example project (``>=4.44,<4.48``
    with the ``compute_loss`` override of its lint example)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (to,) = re.findall(r"trainwright upgrade --to (\S+)", readme)
    (declared,) = re.findall(r"checked against transformers (\S+) \(pyproject\.toml\)", readme)
    project = tmp_path / "your-project"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace(">=4.46,<5.26", declared))
    (project / "src" / "train.py").write_text(
        "from transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        return super().compute_loss(model, inputs, return_outputs)\n"
    )
    done = _cli(["upgrade", "--to", to], project, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode in (0, 1), done.stderr
    assert f"moving to {to}" in done.stdout and "checked as" not in done.stdout


def test_flake8_with_jobs_prints_the_catalogue_warning_once(tmp_path: Path) -> None:
    project = _project(tmp_path / "project")
    (project / "pyproject.toml").write_text(PROJECT_PYPROJECT.replace(">=4.46,<5.26", "==5.26.0"))
    for i in range(6):
        (project / f"m{i}.py").write_text(RESUMING.replace("ResumingTrainer", f"T{i}"))
    done = _cli(
        ["--select", "TW", "-j", "2", "."], project, [ROOT / "src"], tmp_path / "cache", module="flake8"
    )
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "catalog add 5.26.0" in warnings[0], done.stderr


def test_explain_of_an_unknown_method_says_how_to_cover_a_newer_release(tmp_path: Path) -> None:
    done = _cli(["explain", "get_streamed_dataloader"], tmp_path, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode == 2 and "`trainwright catalog add VERSION`" in done.stderr


def test_catalog_add_refuses_a_release_inside_the_catalogue(tmp_path: Path) -> None:
    done = _cli(["catalog", "add", "5.10.0"], tmp_path, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode == 2 and "not newer than the shipped catalogue" in done.stderr
    done = _cli(["catalog", "add", "five"], tmp_path, [ROOT / "src"], tmp_path / "cache")
    assert done.returncode == 2 and "not a PEP 440 version" in done.stderr
    junk = tmp_path / "transformers-5.26.0-py3-none-any.whl"
    junk.write_text("not a zip")
    done = _cli(
        ["catalog", "add", "5.26.0", "--wheel", str(junk)], tmp_path, [ROOT / "src"], tmp_path / "cache"
    )
    assert done.returncode == 2 and "not a wheel" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "cache" / "trainwright" / "catalog" / "transformers").exists() or not any(
        (tmp_path / "cache" / "trainwright" / "catalog" / "transformers").iterdir()
    )


# ------------------------------------------------------------------------------------------- the cache


def test_the_cache_folder_follows_xdg_cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert usercache.library_dir("transformers") == tmp_path / "trainwright" / "catalog" / "transformers"


def test_the_source_hash_changes_with_the_installed_files(tmp_path: Path) -> None:
    folder, dist_info = tmp_path / "transformers", tmp_path / "transformers-9.0.0.dist-info"
    folder.mkdir()
    dist_info.mkdir()
    (folder / "trainer.py").write_text("class Trainer: ...\n")
    without_record = usercache.source_digest(folder, dist_info)
    (folder / "trainer.py").write_text("class Trainer:\n    def train(self): ...\n")
    assert usercache.source_digest(folder, dist_info) != without_record
    (dist_info / "RECORD").write_text("transformers/trainer.py,sha256=abc,10\n")
    with_record = usercache.source_digest(folder, dist_info)
    (dist_info / "RECORD").write_text("transformers/trainer.py,sha256=def,12\n")
    assert usercache.source_digest(folder, dist_info) != with_record


def test_records_of_another_extractor_or_older_releases_are_not_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = usercache.library_dir("transformers")
    folder.mkdir(parents=True)
    good = {
        "extractor": usercache.EXTRACTOR_VERSION,
        "normaliser": usercache.NORMALISER_VERSION,
        "source": "/w/transformers-9.1.0-py3-none-any.whl",
        "record": {"release": {}, "facts": {}},
    }
    (folder / "9.1.0-wheel-aaaa.json").write_text(json.dumps(good))
    (folder / "9.2.0-wheel-bbbb.json").write_text(json.dumps({**good, "extractor": 0}))
    (folder / "9.3.0-wheel-cccc.json").write_text("{not json")
    (folder / "5.0.0-wheel-dddd.json").write_text(json.dumps(good))  # inside the catalogue
    (folder / "9.4.0-installed-eeee.json").write_text(json.dumps(good))  # covers only while installed
    added = usercache.added_releases("transformers", "5.25.0")
    assert [a.version for a in added] == ["9.1.0"]
    assert added[0].provenance == "9.1.0 from transformers-9.1.0-py3-none-any.whl"
