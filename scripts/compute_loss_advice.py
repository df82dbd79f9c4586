#!/usr/bin/env python3
"""TW301's ``compute_loss`` advice, judged on any releases of the range (issue 32).

An override computing its own loss (``tests/oracle/programs/own_loss.py``) fails from 4.46 on, where the
Trainer passes ``num_items_in_batch``. The finding asks for the division by
``gradient_accumulation_steps`` when ``num_items_in_batch`` is given (``own_loss_divided.py``); the safe
fix of an override that calls ``super()`` forwards it (``super_loss.py`` fixed for ``>=4.46,<6``). Each is
trained on every release named and compared with its original on 4.45.2, the last release where it ran
(``compare(..., ignore=ACROSS_RELEASES)``), and the forwarding fix also with the plain Trainer on the same
release (4.46-5.0 scale a causal LM's loss by (T-1)/T themselves). ``tests/oracle/test_fix_safety.py``
checks 4.46.3 and the pinned release in CI; this runs the rest of the range:

    PYTHONPATH=src:plugin .venv/bin/python scripts/compute_loss_advice.py 4.47.1 4.51.3 4.57.6 5.0.0
"""

from __future__ import annotations

import argparse
import tempfile
from importlib import metadata
from pathlib import Path

from trainwright.testing.fixed import fixed_copy
from trainwright.testing.oracle import ACROSS_RELEASES, Spec, compare, run_specs
from trainwright.testing.releases import ensure

PROGRAMS = Path(__file__).resolve().parents[1] / "tests" / "oracle" / "programs"
REFERENCE = "4.45.2"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="+")
    args = parser.parse_args(argv)
    super_fixed = fixed_copy(PROGRAMS / "super_loss.py", Path(tempfile.mkdtemp()), target=">=4.46,<6").path
    old = ensure(REFERENCE)
    specs = {
        "own": Spec(PROGRAMS / "own_loss.py", release=old),
        "super": Spec(PROGRAMS / "super_loss.py", release=old),
    }
    pinned = metadata.version("transformers")
    for release in args.releases:
        folder = None if release == pinned else ensure(release)
        specs[f"divided@{release}"] = Spec(PROGRAMS / "own_loss_divided.py", release=folder)
        specs[f"forwarded@{release}"] = Spec(super_fixed, release=folder)
        specs[f"plain@{release}"] = Spec(PROGRAMS / "plain.py", release=folder)
    records = dict(zip(specs, run_specs(list(specs.values()))))
    wrong = 0
    for release in args.releases:
        divided = compare(records["own"], records[f"divided@{release}"], ignore=ACROSS_RELEASES)
        forwarded = compare(records["super"], records[f"forwarded@{release}"], ignore=ACROSS_RELEASES)
        as_plain = compare(
            records[f"plain@{release}"], records[f"forwarded@{release}"], ignore=(*ACROSS_RELEASES, "lines")
        )
        wrong += bool(divided) + bool(as_plain)
        print(
            f"{release}: divided {len(divided)} differences from own_loss on {REFERENCE}; forwarded "
            f"{len(forwarded)} from super_loss on {REFERENCE}, {len(as_plain)} from the plain Trainer there"
        )
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
