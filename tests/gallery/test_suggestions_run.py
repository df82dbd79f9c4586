"""Every move ``trainwright fix --suggest`` previews for the gallery, applied as printed, runs in a real
three-step Trainer run on a toy model, and every line of every event the callback defines is executed.

The old hand-written suggestions crashed on their first call (a value the Trainer set on itself was
never given to the callback). The preview is now the move fix itself: the callback holds the trainer,
and the trainer registers it in its own ``__init__``.

To run every line in three steps, the harness makes each step gate fire (the right side of every ``%``
becomes 1) and saves and logs at every step, with two micro-batches per step (``on_substep_end`` fires
between them); nothing else of the program is changed, and the Trainer subclass is built as is.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from trainwright.testing.suggested import NO_MOVE, apply_diff, blocks

GALLERY = Path(__file__).resolve().parents[2] / "examples" / "gallery"

pytestmark = pytest.mark.slow


def previews() -> list[tuple[str, str]]:
    """(gallery file, the file with one previewed move applied) for every preview over the gallery."""
    files = sorted(GALLERY.glob("*_before.py"))
    out = subprocess.run(
        # --preview: the moves of preview variants (``Rule.preview_variants``) too
        [sys.executable, "-m", "trainwright_lint", "fix", "--suggest", "--preview", *map(str, files)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = []
    for block in blocks(out):
        if NO_MOVE in block:
            continue
        path = Path(block.split(":", 1)[0])
        found.append((path.name, apply_diff((GALLERY / path.name).read_text(), block.split("\n", 2)[2])))
    return found


PREVIEWS = previews()


def test_the_gallery_yields_a_preview_per_timing_override() -> None:
    """The run below would pass vacuously on an empty list: one preview per TW201/TW202 finding of the
    gallery (five files, with ``--preview``); TW203's two have no move (a preview rule)."""
    assert len(PREVIEWS) == 5
    assert {"progress_file_before.py", "checkpoint_extras_before.py"} <= {name for name, _ in PREVIEWS}


class _EveryStep(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod):
            node.right = ast.copy_location(ast.Constant(1), node.right)
        return node


def _event_lines(tree: ast.Module) -> set[int]:
    """The lines every run of the callback's event methods (``on_*``) executes once the step gates fire:
    all their statements except those under a condition on the data."""
    lines: set[int] = set()

    def take(body: list[ast.stmt]) -> None:
        for statement in body:
            lines.add(statement.lineno)
            if isinstance(statement, (ast.If, ast.While)):
                gate = any(
                    isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in ast.walk(statement.test)
                )
                if gate:
                    take(statement.body)
            elif isinstance(statement, (ast.With, ast.For, ast.Try)):
                take(statement.body)

    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for method in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name.startswith("on_")):
            take(method.body)
    return lines


@pytest.fixture(scope="module")
def toy():  # type: ignore[no-untyped-def]
    from datasets import Dataset

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    encoded = tokenizer(
        ["hello world", "a helpful answer"] * 6, padding="max_length", max_length=8, truncation=True
    )
    dataset = Dataset.from_dict({**encoded, "labels": encoded["input_ids"]})
    return tokenizer, dataset, lambda: build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1)


@pytest.mark.parametrize(("origin", "code"), PREVIEWS, ids=[o for o, _ in PREVIEWS])
@pytest.mark.train("each previewed move runs in a real training run")
def test_the_previewed_move_runs_in_a_real_training_run(origin: str, code: str, toy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import torch
    from transformers import Trainer, TrainingArguments

    torch.set_num_threads(1)
    tokenizer, dataset, model = toy
    tree = ast.fix_missing_locations(_EveryStep().visit(ast.parse(code)))
    namespace: dict = {"__name__": "preview"}
    filename = f"<preview for {origin}>"
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - the moved program is the thing under test
    (trainer_class,) = [
        v for v in namespace.values() if isinstance(v, type) and issubclass(v, Trainer) and v is not Trainer
    ]
    executed: set[int] = set()

    def trace(frame, event, arg):  # type: ignore[no-untyped-def]
        if frame.f_code.co_filename != filename:
            return None
        if event == "line":
            executed.add(frame.f_lineno)
        return trace

    args = TrainingArguments(
        output_dir=str(tmp_path), max_steps=3, gradient_accumulation_steps=2, logging_steps=1,
        save_strategy="steps", save_steps=1, save_only_model=True, per_device_train_batch_size=2,
        report_to=[], disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    trainer = trainer_class(
        model=model(), args=args, train_dataset=dataset, eval_dataset=dataset, processing_class=tokenizer
    )
    sys.settrace(trace)
    try:
        result = trainer.train()
    finally:
        sys.settrace(None)
    assert result.global_step == 3
    never = _event_lines(tree) - executed
    assert not never, f"lines never run: {sorted(never)}\n{code}"
