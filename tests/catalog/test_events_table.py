"""The events table covers the catalogue: every catalogued transformers release has a table of its own,
read from that release's source (``scripts/build_events.py``), not the nearest older one's."""

from __future__ import annotations

from trainwright.catalog import load_catalog
from trainwright.catalog.events import load_events, load_proofs


def test_every_catalogued_release_has_its_own_event_table() -> None:
    catalogued = list(load_catalog().versions)
    assert "5.25.0" in catalogued
    assert list(load_events().versions) == catalogued
    assert list(load_proofs().versions) == catalogued  # the linter's extract, rebuilt with it


def test_the_newest_release_is_the_one_a_newest_target_resolves_to() -> None:
    newest = load_catalog().versions[-1]
    assert load_events().at(newest).version == newest
    assert load_events().at("99.0.0").version == newest  # a release beyond the catalogue: nearest below
