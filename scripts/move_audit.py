#!/usr/bin/env python3
"""Audit every TW2xx move placement with the behaviour oracle: for each overridable Trainer method, a
print before and after its ``super()`` call, each gated on the global step or not, and a file appended
after it; apply ``trainwright fix --unsafe-fixes`` to each, train both with the oracle and compare.

Why: the moves are placed from the events table (which events fire on a method's call paths), and a
placement can be proven on paper and still run the code at other moments. This run is the proof that
counts. ``_move.PROVEN_PLACEMENTS`` lists the (method, side, gated) placements it found equal; a
placement not in it is refused. Prints one line per program (the events written and the verdict) and
exits 1 when a move the linter writes is not oracle-equal:

    python scripts/move_audit.py [--methods training_step compute_loss ...]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from trainwright_lint.rules import moving

from trainwright.testing.compare import compare, named_differences
from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy, judged_spec
from trainwright.testing.oracle import run_specs

#: Method -> its parameters as an override declares them.
METHODS = {
    "training_step": "model, inputs, num_items_in_batch=None",
    "compute_loss": "model, inputs, return_outputs=False, num_items_in_batch=None",
    "compute_loss_context_manager": "*args, **kwargs",
    "_prepare_inputs": "*args, **kwargs",
    "get_batch_samples": "*args, **kwargs",
    "evaluate": "*args, **kwargs",
    "_evaluate": "*args, **kwargs",
    "evaluation_loop": "*args, **kwargs",
    "prediction_step": "*args, **kwargs",
    "predict": "*args, **kwargs",
    "log": "logs, start_time=None",
    "_maybe_log_save_evaluate": "*args, **kwargs",
    "_save_checkpoint": "*args, **kwargs",
    "save_model": "*args, **kwargs",
    "_save": "*args, **kwargs",
    "create_optimizer": "*args, **kwargs",
    "create_scheduler": "*args, **kwargs",
    "train": "*args, **kwargs",
    "_inner_training_loop": "*args, **kwargs",
    "get_train_dataloader": "*args, **kwargs",
    "get_eval_dataloader": "*args, **kwargs",
    "_load_from_checkpoint": "*args, **kwargs",
    "_load_rng_state": "*args, **kwargs",
    "_load_best_model": "*args, **kwargs",
}
GATE = "if self.state.global_step % 2 == 0:\n    "
#: Variant -> (code before the call, code after it).
VARIANTS = {
    "print-before": ("print('{m} before', self.state.global_step)\n", ""),
    "print-after": ("", "print('{m} after', self.state.global_step)\n"),
    "gated-before": (GATE + "print('{m} gated before', self.state.global_step)\n", ""),
    "gated-after": ("", GATE + "print('{m} gated after', self.state.global_step)\n"),
    "file-after": (
        "",
        (
            "with open(os.path.join(self.args.output_dir, '{m}.txt'), 'a') as f:\n"
            "    f.write(str(self.state.global_step))\n"
        ),
    ),
}


def program(method: str, variant: str) -> str:
    """The override of ``method`` with ``variant``'s code around its ``super()`` call."""
    signature = METHODS[method]
    names = (
        signature if signature.startswith("*") else ", ".join(p.split("=")[0] for p in signature.split(", "))
    )
    before, after = (part.format(m=method) for part in VARIANTS[variant])
    call = f"super().{method}({names})"
    body = before + (f"result = {call}\n{after}return result\n" if after else f"return {call}\n")
    indented = "".join(f"        {line}\n" for line in body.splitlines())
    return (
        f"import os\n\nfrom transformers import Trainer\n\n\nclass T(Trainer):\n"
        f"    def {method}(self, {signature}):\n{indented}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", nargs="*", default=sorted(METHODS), choices=sorted(METHODS))
    parser.add_argument("--target", default=DEFAULT_RANGE, help="the range the copies declare")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tw-move-audit-"))
    moved = []
    for method in args.methods:
        for variant in VARIANTS:
            path = work / f"{method.strip('_')}-{variant}.py"
            path.write_text(program(method, variant), encoding="utf-8")
            fixed = fixed_copy(path, work / path.stem, target=args.target, unsafe=True, select=moving())
            if fixed.changed:
                moved.append((method, variant, path, fixed))
            else:
                print(f"{method:32} {variant:13} no move")
    records = run_specs([s for *_, p, f in moved for s in (judged_spec(p), judged_spec(f.path))])
    wrong = 0
    for k, (method, variant, _, fixed) in enumerate(moved):
        text = fixed.path.read_text(encoding="utf-8")
        events = sorted({line.split("(")[0].split()[-1] for line in text.splitlines() if "def on_" in line})
        differences = compare(records[2 * k], records[2 * k + 1], named=named_differences(text))
        wrong += bool(differences)
        verdict = "oracle-equal" if not differences else f"{len(differences)} differences: {differences[0]}"
        print(f"{method:32} {variant:13} {','.join(events):45} {verdict}")
    print(f"{len(moved) - wrong} of {len(moved)} moves oracle-equal")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
