"""Hand-written knowledge that cannot be generated from source: advice, purposes, event timing.

Why separate from the generated file: ``scripts/build_catalog.py`` rewrites ``data/<library>.json`` from
wheels; the advice in ``data/guidance.json`` is written by people from the research note
(``trainer_api.md``) and its evidence links, and must survive regeneration untouched.

``guidance.json`` layout::

    {"guidance": {NAME: {"verdict", "summary", "events", "public_methods", "arguments", "callbacks",
                         "evidence"}},
     "methods":  {NAME: {"purpose": str, "alternative": str}},
     "events":   {NAME: {"order": int, "fires": str}}}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from trainwright.catalog.model import VERDICTS, Guidance


@dataclass(frozen=True)
class GuidanceBook:
    """The decision guide's data, loaded once: per method the verdict and what to use instead, and
    per event when it fires."""

    guidance: dict[str, Guidance]
    purposes: dict[str, str]
    alternatives: dict[str, str]
    events: dict[str, tuple[int, str]]  # name -> (firing order, when it fires)


def _guidance(name: str, raw: dict[str, object]) -> Guidance:
    verdict = raw.get("verdict")
    if verdict not in VERDICTS:
        raise ValueError(f"guidance for {name!r}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")

    def strings(key: str) -> tuple[str, ...]:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"guidance for {name!r}: {key!r} must be a list of strings")
        return tuple(value)

    return Guidance(
        name=name,
        verdict=str(verdict),
        summary=str(raw["summary"]),
        events=strings("events"),
        public_methods=strings("public_methods"),
        arguments=strings("arguments"),
        callbacks=strings("callbacks"),
        evidence=strings("evidence"),
    )


def load_guidance_book(library: str = "transformers") -> GuidanceBook:
    if library != "transformers":
        return GuidanceBook({}, {}, {}, {})
    path = os.path.join(os.path.dirname(__file__), "data", "guidance.json")
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    methods = raw.get("methods", {})
    return GuidanceBook(
        guidance={name: _guidance(name, g) for name, g in raw.get("guidance", {}).items()},
        purposes={n: m["purpose"] for n, m in methods.items() if m.get("purpose")},
        alternatives={n: m["alternative"] for n, m in methods.items() if m.get("alternative")},
        events={n: (int(e["order"]), str(e["fires"])) for n, e in raw.get("events", {}).items()},
    )
