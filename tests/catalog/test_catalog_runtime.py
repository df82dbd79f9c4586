"""Run a real ``Trainer`` (tiny Qwen2, CPU) with every catalogued method wrapped by a recorder, and check
that each call the library makes has a shape the catalogue lists for the installed release, that the
caller matches, and that methods the catalogue says are never called (``create_optimizer_and_scheduler``
on 5.1+) really are not. (This test found the ``trainer.NAME(...)`` calls made from other modules, which
the builder now reads too.)

This is what the linter relies on: call sites decide whether an override breaks.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from trainwright.catalog import installed_version, load_catalog
from trainwright.toy import build_tiny_causal_lm, build_tokenizer


def _recording_subclass(names: list[str], calls: list[tuple[str, str | None, int, frozenset[str]]]) -> type:
    stack: list[str] = []

    def wrap(name: str) -> Any:
        base = getattr(transformers.Trainer, name)

        @functools.wraps(base)
        def method(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            if stack:  # called by the library, not by the test itself
                calls.append((name, stack[-1], len(args), frozenset(kwargs)))
            stack.append(name)
            try:
                return base(self, *args, **kwargs)
            finally:
                stack.pop()

        return method

    return type("RecordingTrainer", (transformers.Trainer,), {name: wrap(name) for name in names})


@pytest.mark.slow
def test_observed_calls_match_catalogued_call_sites(tmp_path) -> None:
    cat = load_catalog()
    version = installed_version("transformers")
    assert version in cat.versions, f"transformers {version} is not catalogued"
    view = cat.at(version)
    names = [n for n, m in view.methods().items() if m.kind == "method" and not n.startswith("__")]
    calls: list[tuple[str, str | None, int, frozenset[str]]] = []
    trainer_cls = _recording_subclass(names, calls)

    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1)
    texts = ["the quick brown fox", "jumps over the lazy dog", "hello world 123", "abc def ghi"] * 2
    rows = [tokenizer(t, truncation=True, max_length=16) for t in texts]
    dataset = [{"input_ids": r["input_ids"], "labels": r["input_ids"]} for r in rows]
    collator = transformers.DataCollatorForSeq2Seq(tokenizer, padding=True)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=4,
        per_device_train_batch_size=2,
        per_device_eval_batch_size=4,
        gradient_accumulation_steps=2,
        logging_steps=2,
        eval_strategy="steps",
        eval_steps=2,
        save_steps=4,
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
        save_only_model=False,
    )
    trainer = trainer_cls(
        model=model,
        args=args,
        train_dataset=dataset,
        eval_dataset=dataset[:4],
        data_collator=collator,
        processing_class=tokenizer,
    )
    trainer.train()
    trainer.predict(dataset[:4])

    observed = {name for name, *_ in calls}
    for must in (
        "training_step",
        "compute_loss",
        "_maybe_log_save_evaluate",
        "log",
        "_save_checkpoint",
        "prediction_step",
        "get_batch_samples",
        "_get_train_sampler",
        "create_optimizer",
    ):
        assert must in observed, f"{must} was not exercised by the run"

    problems = []
    for name, caller, n_pos, keywords in sorted(set(calls), key=str):
        info = view.method(name)
        if not info.called:
            problems.append(f"{name} was called (by {caller}) but the catalogue says it is never called")
            continue
        ok = any(
            # A dotted caller is a function in another transformers module that receives the trainer
            # (e.g. trainer_callback.TrainerState.init_training_references); at run time it shows up
            # inside whichever Trainer method called that function.
            (site.caller == caller or "." in site.caller)
            and (site.n_positional == n_pos or (site.star_args and n_pos >= site.n_positional))
            and (set(site.keywords) == keywords or (site.star_kwargs and set(site.keywords) <= keywords))
            for site in info.call_sites
        )
        if not ok:
            sites = "; ".join(s.describe() for s in info.call_sites)
            problems.append(
                f"{name} called by {caller} with {n_pos} positional, keywords {sorted(keywords)}: "
                f"not among [{sites}]"
            )
    assert not problems, "\n".join(problems)
    if view.method("create_optimizer_and_scheduler").called is False:
        assert "create_optimizer_and_scheduler" not in observed
