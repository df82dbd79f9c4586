"""From what was asked (an option, the config, a project file, the installed release) to catalogued
releases: ranges, uncatalogued versions, out-of-catalogue errors and warnings, and the order."""

from __future__ import annotations

from pathlib import Path

import pytest
from trainwright_lint.configuration.target import FALLBACK_SOURCE, Target, TargetError, resolve_project_target

import trainwright.catalog

SPAN = "4.36.0–5.25.0"


@pytest.fixture
def nothing_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pre-commit case: neither transformers nor TRL in the environment."""
    monkeypatch.setattr(trainwright.catalog, "installed_version", lambda dist="transformers": None)


def asked(text: str) -> Target:
    return resolve_project_target("transformers", None, option=text)


def test_a_range_is_every_catalogued_release_inside_it() -> None:
    target = asked(">=4.44,<4.46")
    assert target.releases == ("4.44.0", "4.44.2", "4.45.0", "4.45.2") and not target.warnings
    assert target.newest == "4.45.2"
    assert target.describe() == "transformers >=4.44,<4.46 (--transformers-version) → 4.44.0–4.45.2"
    assert asked("==4.45.*").releases == ("4.45.0", "4.45.2")


def test_an_exact_catalogued_version_is_itself_without_an_arrow() -> None:
    assert asked("4.45.2").describe() == "transformers 4.45.2 (--transformers-version)"
    assert asked("==4.45.2").describe() == "transformers ==4.45.2 (--transformers-version)"
    assert asked("4.46").describe() == "transformers 4.46 (--transformers-version) → 4.46.0"


@pytest.mark.parametrize(
    ("text", "used", "warning"),
    [
        (
            "4.46.2",
            "4.46.1",
            "is not a catalogued release; checking 4.46.1, the nearest catalogued release at or below it",
        ),
        (
            "4.99",
            "4.57.6",
            "is not a catalogued release; checking 4.57.6, the nearest catalogued release at or below it",
        ),
        (
            "5.26.0",
            "5.25.0",
            (
                f"is newer than the catalogue ({SPAN}) and not checked; cover it with "
                "`trainwright catalog add 5.26.0` (or install it where trainwright runs); checking 5.25.0, the "
                "newest covered release, instead"
            ),
        ),
        ("5.26.0.dev0", "5.25.0", "is newer than the catalogue"),
        (">4.57.6,<5", "4.57.6", "contains no catalogued release; checking 4.57.6"),
    ],
)
def test_uncatalogued_versions_map_at_or_below_with_a_warning_naming_the_release(
    text: str, used: str, warning: str
) -> None:
    target = asked(text)
    assert target.releases == (used,)
    (note,) = target.warnings
    assert note.startswith(f"transformers {text} (--transformers-version) ") and warning in note
    assert target.describe() == f"transformers {text} (--transformers-version) → {used}"


@pytest.mark.parametrize("text", ["3.0", "<4.30", "7.0", ">=6", "==4.35.*"])
def test_outside_the_catalogue_is_an_error_naming_its_span(text: str) -> None:
    with pytest.raises(TargetError) as exc:
        asked(text)
    message = str(exc.value)
    assert message.startswith(
        f"transformers {text} (--transformers-version) is outside the catalogue ({SPAN})"
    )
    assert "Pass --transformers-version with a release in" in message


def test_a_range_partly_below_the_catalogue_uses_the_overlap_and_warns() -> None:
    target = asked(">=4.0,<4.40")
    assert target.releases[0] == "4.36.0" and target.newest == "4.39.3"
    assert target.warnings == (
        (
            f"transformers >=4.0,<4.40 (--transformers-version) reaches below the catalogue ({SPAN}); "
            "checking only its catalogued part, 4.36.0–4.39.3"
        ),
    )
    assert not asked(">=4.36").warnings


@pytest.mark.parametrize("text", ["abc", "", ">=", "4.4a.x"])
def test_not_a_version_names_where_it_came_from(text: str) -> None:
    with pytest.raises(TargetError, match="^--transformers-version: "):
        asked(text)


def test_order_option_config_declared_installed_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nothing_installed: None
) -> None:
    (tmp_path / "requirements.txt").write_text("transformers==4.44.2\n")
    resolve = resolve_project_target
    assert (
        resolve("transformers", tmp_path, option="4.45.2", configured="4.46.1").source
        == "--transformers-version"
    )
    configured = resolve("transformers", tmp_path, configured="4.46.1")
    assert (configured.source, configured.releases) == (
        "[tool.trainwright] transformers-version",
        ("4.46.1",),
    )
    assert resolve("transformers", tmp_path).source == "requirements.txt"
    (tmp_path / "requirements.txt").unlink()
    monkeypatch.setattr(trainwright.catalog, "installed_version", lambda dist="transformers": "4.57.6")
    installed = resolve("transformers", tmp_path)
    assert installed.describe() == "transformers 4.57.6 (installed)" and not installed.warnings
    monkeypatch.setattr(trainwright.catalog, "installed_version", lambda dist="transformers": None)
    fallback = resolve("transformers", tmp_path)
    assert fallback.releases == ("5.25.0",) and fallback.source == FALLBACK_SOURCE and fallback.is_fallback
    assert fallback.describe() == "transformers 5.25.0 (newest catalogued, no requirement found)"
    (warning,) = fallback.warnings
    assert (
        warning.startswith("no version requirement on transformers found")
        and "checking the newest catalogued" in warning
    )
    assert "5.25.0" in warning and "[tool.trainwright] transformers-version" in warning


def test_an_installed_release_outside_the_catalogue_is_not_remapped_silently(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trainwright.catalog, "installed_version", lambda dist="transformers": "4.30.0")
    target = resolve_project_target("transformers", None)
    # Not remapped silently: the release-dependent rules are off and one warning names the release.
    assert target.below_catalogue and target.releases == ("4.36.0",)
    (warning,) = target.warnings
    assert warning.startswith("transformers 4.30.0 (installed) is older than the catalogue (4.36.0–5.25.0)")


def test_trl_fallback_is_silent_and_a_stale_declared_pin_only_warns(
    tmp_path: Path, nothing_installed: None
) -> None:
    fallback = resolve_project_target("trl", tmp_path)
    assert fallback.is_fallback and fallback.releases == ("1.16.0",) and not fallback.warnings
    (tmp_path / "requirements.txt").write_text("trl==0.8.0\n")
    stale = resolve_project_target("trl", tmp_path)
    assert stale.releases == ("0.19.1",)
    (warning,) = stale.warnings
    assert "trl ==0.8.0 (requirements.txt) is outside the trl catalogue (0.19.1–1.16.0)" in warning
    with pytest.raises(TargetError, match="--trl-version"):
        resolve_project_target("trl", tmp_path, option="0.8.0")
