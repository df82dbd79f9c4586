#!/usr/bin/env python3
"""Regenerate ``src/trainwright/catalog/data/transformers.json`` from released transformers wheels.

Maintainer tool, not run in CI. Every release is read with ``ast`` straight out of its wheel (never
imported), so one interpreter covers 4.36 through 5.x without installing any of them:

    python scripts/build_catalog.py --download            # fetch missing wheels into --wheel-dir, then build
    python scripts/build_catalog.py --versions --source 5.24.0=/path/to/site-packages/transformers  # one release

What is extracted per release (the linter needs the call convention, not only definitions):
- ``Trainer`` / ``Seq2SeqTrainer``: every name defined in the class body (``def``, decorated ``def``, and
  ``from .trainer_pt_utils import ...`` inside the class body), its kind and its parameters; inherited
  methods are folded into ``Seq2SeqTrainer`` (its own definitions win).
- Call sites: every ``self.NAME(...)`` in the class's own functions (and, for ``Seq2SeqTrainer``, in
  ``Trainer``'s), with the number of positional arguments, keyword names and ``*``/``**`` unpacking.
  Two indirections are followed: a method passed as an argument to another method that calls that
  parameter (``_get_dataloader(sampler_fn=self._get_train_sampler)`` -> ``sampler_fn(dataset)``), and a
  local bound to ``self.NAME`` or to ``find_executable_batch_size(self.NAME, ...)`` then called (that
  wrapper adds ``batch_size=``). A bare reference ``self.NAME`` used as a value counts as "called".
  Calls ``trainer.NAME(...)`` from the modules that receive the trainer (``trainer_callback``,
  ``trainer_jit_checkpoint``, ``integrations.deepspeed``, ``integrations.integration_utils``) are recorded
  too, with a dotted caller (the DeepSpeed path calls ``create_optimizer()``, the SIGTERM checkpoint
  calls ``_save_checkpoint(model, trial=None)``).
- ``TrainerCallback`` ``on_*`` events and the kwargs ``CallbackHandler`` passes each one.
- ``TrainerControl`` fields.
Consecutive releases with identical data are merged into ``[first, last, value]`` ranges; keys are sorted
so regenerating gives a clean diff.

The extraction itself lives in the package (:mod:`trainwright.catalog.extract`), because the linter runs
the same code on a release newer than the catalogue (``trainwright catalog add``, or the installed one).

Three more files are written next to ``--out`` (``<stem>-<fact>.json``), with the helpers of
``trainwright.catalog.extract.facts``; the loader reads each only when a query needs it:
- ``transformers-fingerprints.json``: the statement fingerprints
  (``trainwright.catalog.fingerprint``) of every method ``Trainer``/``Seq2SeqTrainer`` define (a
  ``trainer_pt_utils`` function imported into the class body included), per release range, so the linter
  can tell copied upstream statements from the user's own.
- ``transformers-modules.json``: what ``from M import *`` binds for ``EXPORT_MODULES`` (``transformers``
  through its lazy ``_import_structure``, ``transformers.trainer``, ``.trainer_callback``,
  ``.training_args``, ``.integrations``, ...), restricted to classes named ``*Trainer``, ``*Callback``,
  ``*Arguments``, ``*Config``, ``*Control``, ``*State``, ``*CallbackHandler``, each mapped to its
  canonical ``module.Class``; and the class graph (direct bases, canonical) of the trainer, callback and
  arguments classes (``CLASS_MODULES``, ``integrations/*``, any module outside ``models/`` with such a
  class) and every class above them, Keras callbacks included (they are what tells them apart).
- ``transformers-arguments.json``: the dataclass fields (name, default source, default_factory source,
  init) of ``TrainingArguments`` and ``Seq2SeqTrainingArguments``, and the renames the source shows
  (deprecation shims in ``__post_init__``/properties, field help, ``@deprecate_kwarg`` on
  ``Trainer.__init__``/``Seq2SeqTrainer.__init__``) with the releases that carry the shim. Hand-written
  renames live in ``data/argument-renames.json``. ``Trainer.__init__`` parameters are the ``__init__``
  method of ``transformers.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trainwright.catalog.extract import facts
from trainwright.catalog.extract.facts import ranges
from trainwright.catalog.extract.transformers_source import (
    CLASSES,
    PACKAGE,
    dir_sources,
    extract_facts,
    extract_release,
    wheel_sources,
)
from trainwright.catalog.versions import sort_versions

DEFAULT_OUT = ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers.json"
DEFAULT_WHEEL_DIR = Path("/work/wheel_cache")
FORMAT = 1

# First and last patch of every minor from 4.36 to 5.25, plus the releases where a method of
# research note trainer_api.md §3.1 changed mid-minor (4.46.1, 4.48.1, 4.48.2, 4.52.1). 5.10.0 is left out:
# it was yanked ("pushed from a week old main branch"), so 5.10.1 stands for the start of 5.10.
# fmt: off
DEFAULT_VERSIONS: tuple[str, ...] = (
    "4.36.0", "4.36.2", "4.37.0", "4.37.2", "4.38.0", "4.38.2", "4.39.0", "4.39.3", "4.40.0",
    "4.40.2", "4.41.0", "4.41.2", "4.42.0", "4.42.4", "4.43.0", "4.43.4", "4.44.0", "4.44.2",
    "4.45.0", "4.45.2", "4.46.0", "4.46.1", "4.46.3", "4.47.0", "4.47.1", "4.48.0", "4.48.1",
    "4.48.2", "4.48.3", "4.49.0", "4.50.0", "4.50.3", "4.51.0", "4.51.3", "4.52.0", "4.52.1",
    "4.52.4", "4.53.0", "4.53.3", "4.54.0", "4.54.1", "4.55.0", "4.55.4", "4.56.0", "4.56.2",
    "4.57.0", "4.57.6", "5.0.0", "5.1.0", "5.2.0", "5.3.0", "5.4.0", "5.5.0", "5.5.4", "5.6.0",
    "5.6.2", "5.7.0", "5.8.0", "5.8.1", "5.9.0", "5.10.1", "5.10.4", "5.11.0", "5.12.0", "5.12.1",
    "5.13.0", "5.13.1", "5.14.0", "5.14.1", "5.15.0", "5.15.1", "5.16.0", "5.16.1", "5.17.0",
    "5.18.0", "5.19.0", "5.20.0", "5.20.2", "5.21.0", "5.21.1", "5.22.0", "5.22.2", "5.23.0",
    "5.24.0", "5.25.0",
)
# fmt: on


def find_wheel(wheel_dir: Path, version: str) -> Path | None:
    hits = sorted(wheel_dir.glob(f"transformers-{version}-*.whl"))
    return hits[0] if hits else None


def download(wheel_dir: Path, versions: Iterable[str]) -> None:
    wheel_dir.mkdir(parents=True, exist_ok=True)
    for version in versions:
        if find_wheel(wheel_dir, version) is None:
            print(f"downloading transformers=={version}", file=sys.stderr)
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--no-deps",
                    f"transformers=={version}",
                    "-d",
                    str(wheel_dir),
                ],
                check=True,
            )


# --------------------------------------------------------------------------------------------- merging


def merge(releases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    versions = list(sort_versions(list(releases)))
    classes: dict[str, Any] = {}
    for cls_name, _, _ in CLASSES:
        names = sorted({n for v in versions for n in releases[v]["classes"][cls_name]})
        methods: dict[str, Any] = {}
        for name in names:

            def entry(v: str, key: str, name: str = name, cls_name: str = cls_name) -> Any:
                info = releases[v]["classes"][cls_name].get(name)
                return None if info is None else info[key]

            def definition(v: str, name: str = name, cls_name: str = cls_name) -> Any:
                info = releases[v]["classes"][cls_name].get(name)
                return None if info is None else [info["owner"], info["kind"], info["params"]]

            methods[name] = {
                "defs": [[a, b, *val] for a, b, val in ranges(versions, definition)],
                "calls": [r for r in ranges(versions, lambda v: entry(v, "calls")) if r[2]],
                "called": [[a, b] for a, b, val in ranges(versions, lambda v: entry(v, "called")) if val],
            }
        classes[cls_name] = methods
    event_names = sorted({e for v in versions for e in releases[v]["events"]})
    events = {e: ranges(versions, lambda v, e=e: releases[v]["events"].get(e)) for e in event_names}
    flags = ranges(versions, lambda v: releases[v]["control_flags"])
    return {
        "format": FORMAT,
        "generator": "scripts/build_catalog.py",
        "library": "transformers",
        "versions": versions,
        "classes": classes,
        "events": events,
        "control_flags": flags,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="*", default=list(DEFAULT_VERSIONS), help="releases to cover")
    parser.add_argument(
        "--wheel-dir", type=Path, default=DEFAULT_WHEEL_DIR, help="wheel cache (outside the repo)"
    )
    parser.add_argument("--download", action="store_true", help="pip download missing wheels first")
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="VERSION=DIR",
        help="read a release from an unpacked transformers package directory instead of a wheel",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    dirs = dict(item.split("=", 1) for item in args.source)
    versions = [v for v in args.versions if v not in dirs]  # ``--versions`` with no value: only --source ones
    if args.download:
        download(args.wheel_dir, [v for v in versions if v not in dirs])
    releases: dict[str, dict[str, Any]] = {}
    release_facts: dict[str, dict[str, Any]] = {}
    for version in sorted(set(versions) | set(dirs)):
        if version in dirs:
            sources = dir_sources(Path(dirs[version]))
            package = facts.Package.from_dir(Path(dirs[version]))
        else:
            wheel = find_wheel(args.wheel_dir, version)
            if wheel is None:
                parser.error(f"no wheel for transformers=={version} in {args.wheel_dir} (use --download)")
            sources = wheel_sources(wheel)
            package = facts.Package.from_wheel(wheel, PACKAGE)
        try:
            releases[version] = extract_release(sources)
            release_facts[version] = extract_facts(sources, package)
        except (LookupError, SyntaxError) as exc:
            raise SystemExit(f"transformers {version}: {exc}") from exc
    data = merge(releases)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out} ({len(data['versions'])} releases, {args.out.stat().st_size} bytes)",
        file=sys.stderr,
    )
    facts.write_facts(args.out, PACKAGE, GENERATOR, data["versions"], release_facts)
    return 0


GENERATOR = "scripts/build_catalog.py"


if __name__ == "__main__":
    sys.exit(main())
