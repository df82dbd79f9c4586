#!/usr/bin/env python
"""Draw the Trainer's training loop — methods in call order and where each callback event fires — as SVG.

    python scripts/draw_training_loop.py                 # writes docs/img/training-loop.svg
    python scripts/draw_training_loop.py --check         # exits 1 if the checked-in file is stale
    python scripts/draw_training_loop.py --transformers-version 4.45.2 -o loop-4.45.svg

The *structure* of the loop (which method runs inside which loop, and which event follows it) is
written out below, because no release file states it; everything that changes between releases comes
from the catalogue: whether each method exists, whether it is public or private, whether the Trainer
still calls it, and which events exist and what they receive. A method or event absent from the chosen
release is left out, so the picture for 4.45 differs from the one for 5.24 where the history says so.
The output is plain, deterministic SVG text, so a test can compare it byte for byte.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

from trainwright.catalog import VersionView, load_catalog

DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "img" / "training-loop.svg"

# (depth, kind, name): kind "method" = a Trainer method, "event" = a callback event,
# "loop" = a loop header, "code" = a line of Trainer code that is neither.
LOOP: tuple[tuple[int, str, str], ...] = (
    (0, "method", "__init__"),
    (0, "event", "on_init_end"),
    (0, "method", "train"),
    (1, "method", "get_train_dataloader"),
    (2, "method", "_get_train_sampler"),
    (1, "method", "create_optimizer"),
    (1, "method", "create_scheduler"),
    (1, "event", "on_train_begin"),
    (1, "loop", "for each epoch"),
    (2, "event", "on_epoch_begin"),
    (2, "loop", "for each optimizer step"),
    (3, "method", "get_batch_samples"),
    (3, "event", "on_step_begin"),
    (3, "loop", "for each micro-batch (gradient accumulation)"),
    (4, "method", "training_step"),
    (5, "method", "_prepare_inputs"),
    (5, "method", "compute_loss"),
    (4, "event", "on_substep_end"),
    (3, "code", "clip gradients"),
    (3, "event", "on_pre_optimizer_step"),
    (3, "code", "optimizer.step()"),
    (3, "event", "on_optimizer_step"),
    (3, "code", "scheduler.step(); zero_grad(); global_step += 1"),
    (3, "event", "on_step_end"),
    (3, "method", "_maybe_log_save_evaluate"),
    (4, "method", "log"),
    (5, "event", "on_log"),
    (4, "method", "evaluate"),
    (5, "method", "get_eval_dataloader"),
    (5, "method", "evaluation_loop"),
    (6, "method", "prediction_step"),
    (6, "event", "on_prediction_step"),
    (5, "event", "on_evaluate"),
    (4, "method", "_save_checkpoint"),
    (5, "method", "save_model"),
    (4, "event", "on_save"),
    (2, "event", "on_epoch_end"),
    (1, "event", "on_train_end"),
    (0, "method", "predict"),
    (1, "event", "on_predict"),
    (0, "method", "push_to_hub"),
    (1, "event", "on_push_begin"),
)

ROW_HEIGHT = 22
INDENT = 22
METHOD_X = 16
EVENT_X = 470
WIDTH = 900
# Entry points the user calls: "not called by the library" is their normal state, not a dead override.
USER_ENTRY_POINTS = frozenset({"__init__", "train", "evaluate", "predict", "push_to_hub"})
COLOURS = {
    "public": ("#dbeafe", "#1e40af"),  # fill, text
    "private": ("#e5e7eb", "#4b5563"),
    "dead": ("#fee2e2", "#991b1b"),
    "event": ("#dcfce7", "#166534"),
}


@dataclass(frozen=True)
class Row:
    depth: int
    kind: str
    label: str
    style: str
    note: str


def layout(view: VersionView) -> list[Row]:
    rows = []
    for depth, kind, name in LOOP:
        if kind == "event":
            event = view.events.get(name)
            if event is None:
                continue
            extra = [k for k in event.kwargs if k in ("logs", "metrics")]
            rows.append(Row(depth, kind, name, "event", f"+ {', '.join(extra)}" if extra else ""))
        elif kind == "method":
            method = view.method(name)
            if method is None:
                continue
            dead = not method.called and name not in USER_ENTRY_POINTS
            style = "dead" if dead else ("private" if method.private else "public")
            note = "private: do not override" if method.private else "public: override point"
            if style == "dead":
                note = "never called by this release"
            rows.append(Row(depth, kind, f"{name}()", style, note))
        else:
            rows.append(Row(depth, kind, name, kind, ""))
    return rows


def render(view: VersionView) -> str:
    rows = layout(view)
    height = 60 + ROW_HEIGHT * len(rows) + 40
    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="12">'
        ),
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        (
            f'<text x="{METHOD_X}" y="24" font-size="15" font-weight="bold">transformers {view.version}: '
            "Trainer methods and callback events, in the order they run</text>"
        ),
        (
            f'<text x="{METHOD_X}" y="44" fill="#4b5563">blue: public method (override point) · grey: private '
            "(do not override) · red: never called · green: callback event</text>"
        ),
    ]
    for index, row in enumerate(rows):
        y = 60 + index * ROW_HEIGHT
        x = METHOD_X + row.depth * INDENT
        if row.kind == "loop":
            out.append(
                f'<text x="{x}" y="{y + 15}" font-style="italic" fill="#7c2d12">↻ {escape(row.label)}</text>'
            )
            continue
        if row.kind == "code":
            out.append(f'<text x="{x}" y="{y + 15}" fill="#6b7280">{escape(row.label)}</text>')
            continue
        fill, ink = COLOURS[row.style]
        if row.kind == "event":
            # a connector from the loop position to the event column
            out.append(
                f'<line x1="{x}" y1="{y + 11}" x2="{EVENT_X}" y2="{y + 11}" stroke="#86efac" stroke-dasharray="3,3"/>'
            )
            x = EVENT_X
        box_width = 9 + 7.3 * len(row.label)
        out.append(f'<rect x="{x}" y="{y + 2}" width="{box_width:.0f}" height="18" rx="4" fill="{fill}"/>')
        out.append(f'<text x="{x + 5}" y="{y + 15}" fill="{ink}">{escape(row.label)}</text>')
        if row.note:
            out.append(
                f'<text x="{x + box_width + 8:.0f}" y="{y + 15}" fill="#6b7280">{escape(row.note)}</text>'
            )
    out.append(
        f'<text x="{METHOD_X}" y="{height - 14}" fill="#6b7280">Generated by scripts/draw_training_loop.py '
        "from the trainwright catalogue.</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--transformers-version", default=None, help="release to draw (default: newest catalogued)"
    )
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if OUTPUT differs from a fresh drawing")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    version = args.transformers_version or catalog.newest  # the docs show the newest, whatever is installed
    svg = render(catalog.at(version))
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != svg:
            print(f"{args.output} is stale: run python scripts/draw_training_loop.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(svg, encoding="utf-8")
    print(f"wrote {args.output} (transformers {version}, {svg.count('<rect') - 1} boxes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
