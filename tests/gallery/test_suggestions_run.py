"""Every callback ``trainwright fix --suggest`` prints for the gallery runs, as pasted, in a real
three-step Trainer run on a toy model, and every line of every event it defines is executed.

The suggestions used to crash on their first call: a value the Trainer subclass set on itself
(``self.log_every``) was read but never given to the callback, and a local computed outside the moved
code (``out = self.args.output_dir``) became ``out = None`` before ``os.path.join(out, ...)``.

To run every line in three steps, the harness makes each step gate fire (the right side of every
``%`` becomes 1: ``state.global_step % 200 == 0`` holds at every step) and saves and logs at every
step; nothing else of the suggestion is changed, and the callback is built exactly as its
``# register it:`` line says.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

GALLERY = Path(__file__).resolve().parents[2] / "examples" / "gallery"
HEADER = re.compile(r"^# (?P<path>\S+\.py):\d+: TW2\d\d ")
REGISTER = re.compile(r"^# register it: trainer\.add_callback\((?P<call>.+?)\)  #", re.MULTILINE)

pytestmark = pytest.mark.slow


def suggestions() -> list[tuple[str, str]]:
    """(gallery file, suggestion text) for every suggestion over the gallery's "before" files."""
    files = sorted(GALLERY.glob("*_before.py"))
    out = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "fix", "--suggest", *map(str, files)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: list[tuple[str, list[str]]] = []
    previous_was_header = False
    for line in out.splitlines():
        header = HEADER.match(line)
        if header and not previous_was_header:  # one suggestion may answer several findings
            found.append((Path(header["path"]).name, []))
        elif not header:
            found[-1][1].append(line)
        previous_was_header = bool(header)
    return [(origin, "\n".join(lines)) for origin, lines in found]


SUGGESTIONS = suggestions()


def test_the_gallery_yields_a_suggestion_per_timing_override() -> None:
    """The run below would pass vacuously on an empty list. One suggestion per TW201/TW202 finding of the
    gallery (five files); TW203's two are off by default (a preview rule)."""
    assert len(SUGGESTIONS) >= 5
    assert {"progress_file_before.py", "checkpoint_extras_before.py"} <= {name for name, _ in SUGGESTIONS}


class _EveryStep(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod):
            node.right = ast.copy_location(ast.Constant(1), node.right)
        return node


def _event_lines(tree: ast.Module) -> set[int]:
    """The lines every run of the callback's event methods (``on_*``) executes once the step gates
    fire: all their statements except those under a condition on the data (``if not
    math.isfinite(loss):`` need not hold in a healthy run)."""
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
        ["hello world", "a helpful answer"] * 4, padding="max_length", max_length=8, truncation=True
    )
    dataset = Dataset.from_dict({**encoded, "labels": encoded["input_ids"]})
    return tokenizer, dataset, lambda: build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1)


@pytest.mark.parametrize(
    ("origin", "code"), SUGGESTIONS, ids=[f"{o}-{i}" for i, (o, _) in enumerate(SUGGESTIONS)]
)
@pytest.mark.train("each suggestion runs in a real training run")
def test_the_suggestion_runs_in_a_real_training_run(origin: str, code: str, toy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from transformers import Trainer, TrainingArguments

    tokenizer, dataset, model = toy
    tree = ast.fix_missing_locations(_EveryStep().visit(ast.parse(code)))
    namespace: dict = {"__name__": "suggestion"}
    filename = f"<suggestion from {origin}>"
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - the suggestion is the thing under test
    (call,) = REGISTER.findall(code)
    callback = eval(call, namespace)  # exactly what the register line tells the user to write

    executed: set[int] = set()

    def trace(frame, event, arg):  # type: ignore[no-untyped-def]
        if frame.f_code.co_filename != filename:
            return None
        if event == "line":
            executed.add(frame.f_lineno)
        return trace

    args = TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=3,
        logging_steps=1,
        save_strategy="steps",
        save_steps=1,
        save_only_model=True,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        report_to=[],
        disable_tqdm=True,
        use_cpu=True,
    )
    trainer = Trainer(
        model=model(),
        args=args,
        train_dataset=dataset,
        eval_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[callback],
    )
    sys.settrace(trace)
    try:
        result = trainer.train()
    finally:
        sys.settrace(None)
    assert result.global_step == 3
    never = _event_lines(tree) - executed
    assert not never, f"lines never run: {sorted(never)}\n{code}"
