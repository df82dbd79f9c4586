"""``trainwright.testing.releases``: an installed release is reused, and a test skips only offline."""

from __future__ import annotations

from pathlib import Path

from trainwright.testing import releases
from trainwright.testing.releases import (
    ReleaseUnavailable,
    companions,
    declared_range,
    ensure,
    installed,
    missing,
    range_floor,
    release_dir,
    requirements,
)


def test_an_installed_release_is_reused_without_pip(tmp_path: Path) -> None:
    folder = release_dir("4.46.3", tmp_path)
    (folder / "transformers").mkdir(parents=True)
    (folder / "transformers" / "__init__.py").write_text("__version__ = '4.46.3'\n")
    assert not installed("4.46.3", tmp_path)  # not marked complete: a broken install is redone
    (folder / ".complete").write_text(" ".join(requirements("4.46.3")) + "\n")
    assert installed("4.46.3", tmp_path) and ensure("4.46.3", tmp_path) == folder


def _as_installed(tmp_path: Path, version: str, pins: list[str]) -> Path:
    """A release folder as pip leaves it: the package, and its metadata with ``pins`` as Requires-Dist."""
    folder = release_dir(version, tmp_path)
    (folder / "transformers").mkdir(parents=True)
    (folder / "transformers" / "__init__.py").write_text(f"__version__ = '{version}'\n")
    info = folder / f"transformers-{version}.dist-info"
    info.mkdir()
    lines = [f"Requires-Dist: {pin}" for pin in pins] + ['Requires-Dist: tokenizers; extra == "x"']
    (info / "METADATA").write_text("Name: transformers\n" + "\n".join(lines) + "\n")
    return folder


def test_a_folder_installed_before_a_companion_was_added_gets_only_the_missing_ones(tmp_path: Path) -> None:
    folder = _as_installed(tmp_path, "4.46.3", ["huggingface-hub<1.0,>=0.23.2", "tokenizers<0.21,>=0.20"])
    before = [
        r for r in requirements("4.46.3", tmp_path) if not r.startswith(("datasets", "httpx", "httpcore"))
    ]
    (folder / ".complete").write_text(" ".join(before) + "\n")
    assert missing("4.46.3", tmp_path) == ["datasets==4.8.5", "httpx<1", "httpcore"]


def test_companions_are_the_releases_own_pins_the_venv_misses(tmp_path: Path) -> None:
    # read from the release's Requires-Dist, not a table: 4.48's tokenizers window (>=0.21,<0.22) is
    # neither 4.46's nor 4.56's, and a 5.x release may pin below the venv's huggingface_hub 2.x
    folder = _as_installed(
        tmp_path, "4.48.3", ["huggingface-hub<1.0,>=0.24.0", "numpy>=1.17", "tokenizers<0.22,>=0.21"]
    )
    needs = companions(folder)
    assert needs[0] == "huggingface_hub<1.0,>=0.24.0" and "requests" in needs and "datasets==4.8.5" in needs
    assert needs[-1] == "tokenizers<0.22,>=0.21" and not any(n.startswith("numpy") for n in needs)
    assert requirements("4.48.3", tmp_path) == ["transformers==4.48.3", *needs, "trl==0.17.0"]
    hub_1 = _as_installed(tmp_path, "5.0.0", ["huggingface-hub<2.0,>=1.3.0", "tokenizers<=0.23.0,>=0.22.0"])
    assert companions(hub_1) == ["huggingface_hub<2.0,>=1.3.0", "tokenizers<=0.23.0,>=0.22.0"]
    assert companions(release_dir("4.51.3", tmp_path)) == []  # not installed: known once it is


def test_only_a_missing_index_counts_as_offline() -> None:
    assert ReleaseUnavailable("pip: ... Max retries exceeded with url: /simple/transformers/").offline
    assert not ReleaseUnavailable("pip: error: invalid requirement").offline


def test_trl_code_is_judged_on_the_range_trl_declares() -> None:
    # TRL 1.16's Requires-Dist says transformers>=4.56.2: its own code never imports on 4.46
    declared = declared_range("trl", ">=4.44,<6")
    assert declared.startswith(">=4.44,<6,") and range_floor(declared) == "4.56.2"
    assert declared_range("libcst", ">=4.44,<6") == ">=4.44,<6"  # declares no transformers
    assert range_floor("<6") is None


def test_each_release_folder_gets_the_newest_trl_its_transformers_admits() -> None:
    # Requires-Dist read from the TRL wheels: 0.19 >=4.51.0, 0.20 >=4.53.2, 0.22 >=4.55.0; from 4.56.2 on
    # the venv's TRL 1.16 serves (its floor)
    assert requirements("4.51.3")[-1] == "trl==0.19.1" and requirements("4.53.3")[-1] == "trl==0.20.0"
    assert requirements("4.55.4")[-1] == "trl==0.22.2" and requirements("4.50.3")[-1] == "trl==0.18.2"
    assert not any(r.startswith("trl") for r in requirements("4.56.2") + requirements("5.24.0"))


def test_a_companions_own_dependency_is_installed_only_when_absent_everywhere(tmp_path: Path) -> None:
    # huggingface_hub 1.x (5.0's pin) imports httpx, which neither the venv nor --no-deps brings; a
    # dependency the venv has, at whatever version, stays the venv's
    folder = tmp_path / "transformers-5.0.0"
    info = folder / "huggingface_hub-1.3.0.dist-info"
    info.mkdir(parents=True)
    requires = ["packaging>=99", "httpx-that-no-venv-has<1,>=0.23", 'pytest-absent-too; extra == "dev"']
    (info / "METADATA").write_text(
        "Name: huggingface_hub\nVersion: 1.3.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    )
    assert releases._absent_dependencies(folder, {"huggingface-hub"}) == ["httpx-that-no-venv-has<1,>=0.23"]
    # a package not followed (TRL, datasets: their dependencies are the venv's business) adds nothing
    assert releases._absent_dependencies(folder, {"trl"}) == []


def test_a_wildcard_pin_is_not_taken_for_a_stale_release(tmp_path: Path) -> None:
    # `httpcore==1.*` (httpx's pin) once made the folder's httpcore-1.0.9 metadata look stale
    for name in ("httpcore-1.0.9.dist-info", "trl-0.12.2.dist-info", "trl-0.17.0.dist-info"):
        (tmp_path / name).mkdir()
    releases._drop_stale(tmp_path, ["httpcore==1.*", "trl==0.17.0"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["httpcore-1.0.9.dist-info", "trl-0.17.0.dist-info"]


def test_the_venvs_datasets_serves_a_release_whose_hub_it_admits(tmp_path: Path) -> None:
    # 5.0.0's folder holds huggingface_hub 1.x and no datasets: the venv's datasets imports with it
    # (19 dev cases stopped at the blocked import on 5.0.0 before); a 4.x hub 0.x it does not admit
    def hub(version: str) -> Path:
        folder = tmp_path / version
        info = folder / f"huggingface_hub-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Name: huggingface_hub\nVersion: {version}\n")
        return folder

    assert releases.datasets_importable(hub("1.33.0")) and not releases.datasets_importable(hub("0.36.2"))
    (tmp_path / "0.36.2" / "datasets").mkdir()
    (tmp_path / "0.36.2" / "datasets" / "__init__.py").write_text("")
    assert releases.datasets_importable(tmp_path / "0.36.2")  # its own copy
    assert releases.datasets_importable(tmp_path)  # no hub of its own: the venv's serves
