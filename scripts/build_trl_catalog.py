#!/usr/bin/env python3
"""Regenerate ``src/trainwright/catalog/data/trl.json``: TRL's trainer classes across TRL releases.

Maintainer tool, not run in CI. Same idea and same JSON format as ``scripts/build_catalog.py`` (whose
extraction helpers it reuses), so ``trainwright.catalog.load_catalog("trl")`` reads it with the same
loader: every release is read with ``ast`` straight out of its wheel, never imported.

    pip download --no-deps trl==1.16.0 -d /work/wheel_cache      # for each release in DEFAULT_VERSIONS
    python scripts/build_catalog.py                               # first: TRL's facts name transformers'
    python scripts/build_trl_catalog.py

What is recorded per release, for every TRL class whose base chain reaches ``transformers.Trainer``
(``GRPOTrainer``, ``DPOTrainer``, ``SFTTrainer``, ``KTOTrainer``, ``RLOOTrainer``, ``RewardTrainer``, ...,
through TRL's own base classes such as ``BaseTrainer``): the methods the class and its TRL bases define
(not those inherited from ``transformers.Trainer``, which the transformers catalogue covers), their
kind, parameters and owner, and the ``self.NAME(...)`` call sites inside that TRL chain. Classes defined
twice (``trl.trainer`` and ``trl.experimental``) keep the ``trl.trainer`` one. There are no callback
events or control flags in this catalogue.

Like ``scripts/build_catalog.py`` it also writes ``trl-fingerprints.json``, ``trl-modules.json`` and
``trl-arguments.json`` next to ``--out``, but keyed by canonical dotted class names, so that a class
defined twice (``trl.trainer.kto_trainer.KTOTrainer`` and ``trl.experimental.kto.KTOTrainer``, one a
deprecation shim subclassing the other) is two classes there:
- fingerprints of every method of every TRL class whose bases reach ``transformers.Trainer`` and of the
  TRL classes above them (``_BaseTrainer``, mixins), experimental ones included;
- star-import exports of ``trl``, ``trl.scripts``, and every module under ``trl.trainer`` and
  ``trl.experimental``; the TRL class graph, with transformers bases named as the transformers
  catalogue names them (read from ``--transformers-modules``: build transformers first);
- the fields of every TRL ``*Config``/``*Arguments`` class (its own body; inherited ones are joined by the
  loader along the class graph) and the renames their ``__post_init__`` and the trainers' ``__init__``
  show (``--transformers-arguments`` supplies the ``TrainingArguments`` field names a TRL config inherits,
  for ``exp_name`` -> ``run_name``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trainwright.catalog.extract import facts
from trainwright.catalog.extract.facts import ranges
from trainwright.catalog.extract.trl_source import (
    PACKAGE,
    extract_facts,
    extract_release,
    package_trees,
    transformers_canonicaliser,
)
from trainwright.catalog.versions import sort_versions

DEFAULT_OUT = ROOT / "src" / "trainwright" / "catalog" / "data" / "trl.json"
DEFAULT_WHEEL_DIR = Path("/work/wheel_cache")
FORMAT = 1
# A dozen releases from 0.19 to the newest: TRL moves fast, so roughly one every two minors.
DEFAULT_VERSIONS: tuple[str, ...] = (
    "0.19.1", "0.21.0", "0.23.1", "0.25.1", "0.27.2", "0.29.1",
    "1.0.0", "1.4.0", "1.8.0", "1.12.0", "1.16.0",
)  # fmt: skip


def merge(releases: dict[str, dict[str, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    versions = list(sort_versions(list(releases)))
    class_names = sorted({c for v in versions for c in releases[v]})
    classes: dict[str, Any] = {}
    for cls_name in class_names:
        names = sorted({n for v in versions for n in releases[v].get(cls_name, {})})
        methods: dict[str, Any] = {}
        for name in names:

            def info(v: str, name: str = name, cls_name: str = cls_name) -> dict[str, Any] | None:
                return releases[v].get(cls_name, {}).get(name)

            def definition(v: str) -> Any:
                i = info(v)
                return None if i is None else [i["owner"], i["kind"], i["params"]]

            methods[name] = {
                "defs": [[a, b, *val] for a, b, val in ranges(versions, definition)],
                "calls": [r for r in ranges(versions, lambda v: (info(v) or {}).get("calls")) if r[2]],
                "called": [
                    [a, b] for a, b, val in ranges(versions, lambda v: (info(v) or {}).get("called")) if val
                ],
            }
        classes[cls_name] = methods
    return {
        "format": FORMAT,
        "generator": "scripts/build_trl_catalog.py",
        "library": "trl",
        "versions": versions,
        "classes": classes,
        "events": {},
        "control_flags": [],
    }


GENERATOR = "scripts/build_trl_catalog.py"
DEFAULT_TRANSFORMERS_MODULES = ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers-modules.json"
DEFAULT_TRANSFORMERS_ARGUMENTS = (
    ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers-arguments.json"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="*", default=list(DEFAULT_VERSIONS))
    parser.add_argument("--wheel-dir", type=Path, default=DEFAULT_WHEEL_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--transformers-modules",
        type=Path,
        default=DEFAULT_TRANSFORMERS_MODULES,
        help="the transformers catalogue's modules file, to name transformers classes canonically",
    )
    parser.add_argument(
        "--transformers-arguments",
        type=Path,
        default=DEFAULT_TRANSFORMERS_ARGUMENTS,
        help="the transformers catalogue's arguments file (TrainingArguments field names, for renames)",
    )
    args = parser.parse_args(argv)
    canonical = transformers_canonicaliser(json.loads(args.transformers_modules.read_text(encoding="utf-8")))
    arguments_doc = json.loads(args.transformers_arguments.read_text(encoding="utf-8"))
    transformers_fields = {
        f[0] for spans in arguments_doc["fields"].values() for span in spans for f in span[2]
    }
    releases: dict[str, Any] = {}
    release_facts: dict[str, Any] = {}
    for version in args.versions:
        hits = sorted(args.wheel_dir.glob(f"trl-{version}-*.whl"))
        if not hits:
            parser.error(
                f"no wheel for trl=={version} in {args.wheel_dir}: "
                f"pip download --no-deps trl=={version} -d {args.wheel_dir}"
            )
        package = facts.Package.from_wheel(hits[0], PACKAGE)
        releases[version] = extract_release(package_trees(package))
        release_facts[version] = extract_facts(package, canonical, transformers_fields)
    data = merge(releases)
    args.out.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out} ({len(data['versions'])} releases, {len(data['classes'])} classes, "
        f"{args.out.stat().st_size} bytes)",
        file=sys.stderr,
    )
    facts.write_facts(args.out, PACKAGE, GENERATOR, data["versions"], release_facts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
