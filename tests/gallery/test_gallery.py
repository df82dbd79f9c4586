"""The before/after gallery stays true: each "before" yields exactly the codes its first line names
(``# expect-preview:`` on the second line, or after the first line's codes, adds the codes of preview rules
and variants, reported only with ``--preview``),
each "after" lints clean, and each "after" builder really constructs and trains a Trainer."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

GALLERY = Path(__file__).resolve().parents[2] / "examples" / "gallery"
BEFORE = sorted(GALLERY.glob("*_before.py"))
AFTER = sorted(GALLERY.glob("*_after.py"))


def lint_codes(path: Path, *flags: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "--format", "json", *flags, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    return sorted(finding["code"] for finding in json.loads(out.stdout))


def expected_codes(path: Path, preview: bool = False) -> list[str]:
    first, second = (path.read_text().splitlines() + [""])[:2]
    assert first.startswith("# expect:"), f"{path.name} must start with '# expect: CODES'"
    # the preview codes on the second line, or after the first line's own (a preview variant's finding)
    first, _, inline = first.partition("# expect-preview:")
    codes = first.removeprefix("# expect:").split()
    if preview and second.startswith("# expect-preview:"):
        codes += second.removeprefix("# expect-preview:").split()
    if preview:
        codes += inline.split()
    return sorted(codes)


def test_every_before_has_an_after() -> None:
    assert [p.name.replace("_before", "") for p in BEFORE] == [p.name.replace("_after", "") for p in AFTER]
    assert len(BEFORE) >= 8


@pytest.mark.parametrize("path", BEFORE, ids=lambda p: p.stem)
def test_before_yields_its_expected_findings(path: Path) -> None:
    assert sorted(set(lint_codes(path))) == sorted(set(expected_codes(path)))


@pytest.mark.parametrize(
    "path", [p for p in BEFORE if "# expect-preview:" in p.read_text()], ids=lambda p: p.stem
)
def test_before_with_preview_adds_the_preview_codes(path: Path) -> None:
    assert sorted(set(lint_codes(path, "--preview"))) == sorted(set(expected_codes(path, preview=True)))


@pytest.mark.parametrize("path", AFTER, ids=lambda p: p.stem)
def test_after_is_clean(path: Path) -> None:
    assert lint_codes(path) == []


def _load(path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"gallery_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.train("each builder trains a tiny model")
@pytest.mark.parametrize(
    "path", [p for p in AFTER if "def build_trainer" in p.read_text()], ids=lambda p: p.stem
)
def test_after_builder_trains(path: Path, tmp_path: Path) -> None:
    """The "after" code is real: its Trainer trains two steps on a tiny model with its callbacks."""
    import inspect

    from datasets import Dataset

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1)
    texts = ["hello world", "a helpful answer", "the quick brown fox", "question and answer"] * 4
    encoded = tokenizer(texts, padding="max_length", max_length=8, truncation=True)
    dataset = Dataset.from_dict({**encoded, "labels": encoded["input_ids"]})
    builder = _load(path).build_trainer
    available = {
        "model": model,
        "tokenizer": tokenizer,
        "train_dataset": dataset,
        "eval_dataset": dataset,
        "output_dir": str(tmp_path),
    }
    kwargs = {name: available[name] for name in inspect.signature(builder).parameters if name in available}
    trainer = builder(**kwargs)
    trainer.args.max_steps = 2
    trainer.args.per_device_train_batch_size = 4
    trainer.args.report_to = []
    trainer.args.disable_tqdm = True
    trainer.args.use_cpu = True
    result = trainer.train()
    assert result.global_step == 2


@pytest.mark.train("the previewed move runs in a real training run")
def test_previewed_move_for_the_timing_wrapper_really_times_steps(tmp_path: Path) -> None:
    """`trainwright fix --suggest` on the timing wrapper previews the move; applied as printed, the
    trainer times each micro-batch (start at on_step_begin, end before the optimiser step) and logs it."""
    from trainwright.testing.suggested import apply_diff, blocks

    out = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "fix", "--suggest", str(GALLERY / "step_timer_before.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    (block,) = blocks(out.stdout)
    code = apply_diff((GALLERY / "step_timer_before.py").read_text(), block.split("\n", 2)[2])
    namespace: dict = {}
    exec(compile(code, "preview", "exec"), namespace)  # noqa: S102 - the moved program is the thing under test

    from datasets import Dataset
    from transformers import TrainingArguments

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1)
    encoded = tokenizer(
        ["hello world", "a helpful answer"] * 4, padding="max_length", max_length=8, truncation=True
    )
    args = TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=3,
        logging_steps=1,
        per_device_train_batch_size=4,
        report_to=[],
        disable_tqdm=True,
        use_cpu=True,
    )
    trainer = namespace["TimedTrainer"](
        model=model,
        args=args,
        train_dataset=Dataset.from_dict({**encoded, "labels": encoded["input_ids"]}),
    )
    trainer.train()
    step_times = [log["step_time"] for log in trainer.state.log_history if "step_time" in log]
    assert len(step_times) == 3 and all(0 < t < 60 for t in step_times)
