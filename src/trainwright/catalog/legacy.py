"""Trainer methods of releases older than the catalogue: names no catalogued release defines.

Why: the catalogue starts at 4.36, so without this an override of a hook removed earlier
(``_load_state_dict_in_model``, ``init_git_repo``) reads as the project's own helper, and TW102 cannot
say it is dead. The data (``data/<library>-legacy.json``, written by ``scripts/build_legacy_names.py``)
comes from a sample of old releases, so it knows the first sampled release *without* a name, not the
exact release that removed it; messages say "removed before" that release.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class LegacyMethod:
    """A method ``cls`` had in sampled releases before the catalogue, and in no catalogued one."""

    name: str
    cls: str
    first_seen: str  # the first sampled release that defines it
    last_seen: str  # the last sampled release that defines it
    gone_by: str  # the first sampled (or catalogued) release without it


@dataclass(frozen=True)
class LegacyNames:
    sampled: tuple[str, ...]
    methods: dict[tuple[str, str], LegacyMethod]  # (class, name) -> method

    def method(self, name: str, cls: str) -> LegacyMethod | None:
        """``cls.name`` or, since every catalogued trainer class inherits it, ``Trainer.name``."""
        return self.methods.get((cls, name)) or self.methods.get(("Trainer", name))


def load_legacy(data_dir: str, library: str) -> LegacyNames:
    """The legacy names of ``library`` (none when it has no such file: TRL's catalogue starts at the
    releases TRL trainers subclass from)."""
    try:
        with open(os.path.join(data_dir, f"{library}-legacy.json"), encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        return LegacyNames((), {})
    methods = {
        (cls, name): LegacyMethod(name, cls, first, last, gone)
        for cls, names in raw["classes"].items()
        for name, (first, last, gone) in names.items()
    }
    return LegacyNames(tuple(raw["sampled"]), methods)
