#!/usr/bin/env python3
"""Write ``src/trainwright/catalog/data/transformers-legacy.json``: Trainer methods of releases older
than the catalogue that no catalogued release defines.

Maintainer tool, not run in CI. Why: the catalogue starts at 4.36, so an override of a hook that
transformers removed earlier (``_load_state_dict_in_model``, ``init_git_repo``) looks like the project's
own helper, and TW102 cannot say it is dead. Reading every 4.x release would mean downloading 36 wheels
for a handful of names; a sample of releases (``--wheels``) finds the names that lived long enough to be
copied into projects, and the file records which releases were read, so that the message can say
"removed before <the first sampled release without it>" and never claim an exact last release.

    python scripts/build_legacy_names.py --wheels /tmp/whl/transformers-4.*.whl

Every wheel is read with ``ast`` (never imported), like ``scripts/build_catalog.py``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trainwright.catalog import load_catalog
from trainwright.catalog.versions import version_key

OUT = ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers-legacy.json"
CLASSES = {"Trainer": "transformers/trainer.py", "Seq2SeqTrainer": "transformers/trainer_seq2seq.py"}


def methods_of(wheel: Path, cls: str, module: str) -> set[str]:
    """The ``def`` names of ``cls`` in ``module`` of ``wheel`` (empty when the module is absent)."""
    with zipfile.ZipFile(wheel) as archive:
        try:
            source = archive.read(module).decode("utf-8")
        except KeyError:
            return set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {b.name for b in node.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return set()


def build(wheels: list[Path]) -> dict[str, object]:
    catalog = load_catalog()
    releases = []
    for wheel in wheels:
        m = re.search(r"transformers-([\d.]+)-", wheel.name)
        if m is None:
            raise SystemExit(f"not a transformers wheel: {wheel}")
        if version_key(m[1]) >= version_key(catalog.oldest):
            continue  # the catalogue has it
        releases.append((m[1], wheel))
    releases.sort(key=lambda r: version_key(r[0]))
    sampled = [v for v, _ in releases]
    classes: dict[str, dict[str, list[str]]] = {}
    for cls, module in CLASSES.items():
        seen: dict[str, list[str]] = {}
        for version, wheel in releases:
            for name in methods_of(wheel, cls, module):
                if catalog.ever_defined(name, cls=cls):
                    continue
                seen.setdefault(name, []).append(version)
        entries = {}
        for name, versions in sorted(seen.items()):
            later = [v for v in sampled if version_key(v) > version_key(versions[-1])]
            entries[name] = [versions[0], versions[-1], later[0] if later else catalog.oldest]
        classes[cls] = entries
    return {
        "format": 1,
        "library": "transformers",
        "sampled": sampled,
        "catalogue_starts": catalog.oldest,
        "note": "per class: name -> [first sampled release with it, last sampled release with it, "
        "first sampled (or catalogued) release without it]",
        "classes": classes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", nargs="+", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = build(args.wheels)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({sum(len(v) for v in data['classes'].values())} names)")  # type: ignore[union-attr]


if __name__ == "__main__":
    main()
