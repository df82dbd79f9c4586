"""Generate from fixed prompts every N steps or at each evaluation; write a JSONL table and log it.

Replaces ``evaluate`` / ``_maybe_log_save_evaluate`` / ``prediction_step`` overrides that call
``model.generate`` on a few prompts to eyeball progress.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._logs import add_to_logs
from trainwright.callbacks.checkpointed import output_dir
from trainwright.storage.atomic import append_bytes, drop_torn_tail


class SampleGenerationCallback(TrainerCallback):
    """Greedy-generate (by default) completions for ``prompts`` and record them as a table.

    Replaces: ``evaluate`` / ``_maybe_log_save_evaluate`` overrides that generate samples.

    Events: ``on_step_end`` — every ``every_n_steps`` optimizer steps, and (``at_evaluation=True``) at
    every step where an evaluation is about to run (``control.should_evaluate`` is set by then: by
    ``DefaultFlowCallback`` and by schedule callbacks registered *before* this one); ``on_epoch_end``
    likewise for epoch-level evaluations. The model is switched to ``eval()`` under ``torch.no_grad()``
    and restored; greedy decoding draws no random numbers, so training stays reproducible.

    Output, one row per prompt: ``{"step", "epoch", "trigger", "prompt", "completion"}``

    - appended to ``output_path`` (default ``<output_dir>/samples.jsonl``; main process only). A write
      error (full disk, unwritable path) is a warning naming the step and the file, never the end of
      training; a torn last line left by a crash is cut off before the first append;
    - as a JSON string under ``log_key`` (default ``"samples"``) in the next log line, for the
      reporting integrations (TensorBoard shows strings as text, W&B as a text panel; MLflow skips
      non-numbers). To get a log line at the generation step the callback sets ``control.should_log``.
      Register with ``trainwright.callbacks.attach`` so that the integrations see it; ``log_key=None``
      turns this off.

    ``prompts`` are plain strings, or chat messages (a list of ``{"role", "content"}`` dicts) rendered
    with the tokenizer's chat template and a generation prompt. The tokenizer is ``tokenizer`` or the
    Trainer's ``processing_class``. Generation runs on every process (sharded models need all ranks).
    """

    def __init__(
        self,
        prompts: Sequence[str | Sequence[Mapping[str, str]]],
        every_n_steps: int | None = None,
        at_evaluation: bool = False,
        output_path: str | Path | None = None,
        max_new_tokens: int = 32,
        generation_kwargs: Mapping[str, Any] | None = None,
        tokenizer: Any = None,
        log_key: str | None = "samples",
    ) -> None:
        if isinstance(prompts, str) or not prompts:
            raise ValueError(
                "SampleGenerationCallback needs a non-empty list of prompts (not a single string)"
            )
        if every_n_steps is not None and (not isinstance(every_n_steps, int) or every_n_steps < 1):
            raise ValueError(f"every_n_steps must be an integer >= 1 or None, got {every_n_steps!r}")
        if every_n_steps is None and not at_evaluation:
            raise ValueError(
                "SampleGenerationCallback never fires: set every_n_steps=N and/or at_evaluation=True"
            )
        if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
        self.prompts = list(prompts)
        self.every_n_steps = every_n_steps
        self.at_evaluation = at_evaluation
        self.output_path = Path(output_path) if output_path is not None else None
        self.max_new_tokens = max_new_tokens
        self.generation_kwargs = {"do_sample": False, **dict(generation_kwargs or {})}
        self.tokenizer = tokenizer
        self.log_key = log_key
        self.rows: list[dict[str, Any]] = []
        self._pending: list[dict[str, Any]] = []
        self._checked_paths: set[Path] = set()

    def _prompt_text(self, prompt: Any, tokenizer: Any) -> str:
        if isinstance(prompt, str):
            return prompt
        return tokenizer.apply_chat_template(list(prompt), tokenize=False, add_generation_prompt=True)

    @torch.no_grad()
    def generate(self, model: Any, tokenizer: Any) -> list[tuple[str, str]]:
        """``(prompt_text, completion)`` for every prompt, from ``model`` as it is now."""
        was_training = model.training
        model.eval()
        try:
            results = []
            for prompt in self.prompts:
                text = self._prompt_text(prompt, tokenizer)
                encoded = tokenizer(text, return_tensors="pt").to(model.device)
                output = model.generate(
                    **encoded,
                    max_new_tokens=self.max_new_tokens,
                    pad_token_id=tokenizer.pad_token_id,
                    **self.generation_kwargs,
                )
                new_tokens = output[0, encoded["input_ids"].shape[1] :]
                results.append((text, tokenizer.decode(new_tokens, skip_special_tokens=True)))
            return results
        finally:
            model.train(was_training)

    def _run(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        trigger: str,
        **kwargs: Any,
    ) -> None:
        model = kwargs.get("model")
        tokenizer = self.tokenizer if self.tokenizer is not None else kwargs.get("processing_class")
        if tokenizer is None or not callable(tokenizer):
            raise ValueError(
                "SampleGenerationCallback needs a tokenizer: pass tokenizer=... or give the Trainer processing_class="
            )
        rows = [
            {
                "step": state.global_step,
                "epoch": state.epoch,
                "trigger": trigger,
                "prompt": p,
                "completion": c,
            }
            for p, c in self.generate(model, tokenizer)
        ]
        self.rows.extend(rows)
        if state.is_world_process_zero:
            self._append(Path(self.output_path or Path(output_dir(args)) / "samples.jsonl"), rows, state)
        if self.log_key:
            self._pending.extend(rows)
            control.should_log = True

    def _append(self, path: Path, rows: list[dict[str, Any]], state: TrainerState) -> None:
        """Append ``rows`` as whole lines; an I/O error is a warning saying what the file lost."""
        data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path not in self._checked_paths:  # once per run: a line torn by an earlier crash
                fragment = drop_torn_tail(path)
                self._checked_paths.add(path)
                if fragment is not None:
                    warnings.warn(
                        f"SampleGenerationCallback: the last line of {path} was torn (a crash while it was "
                        f"written?) and is removed: {fragment[:80]!r}",
                        stacklevel=3,
                    )
            append_bytes(path, data)
        except OSError as error:
            warnings.warn(
                f"SampleGenerationCallback: could not write the {len(rows)} samples of step {state.global_step} "
                f"to {path} ({type(error).__name__}: {error}); they are lost from the file (still in "
                "callback.rows, and in the logs unless log_key=None). Training continues; the next samples "
                "will be tried again.",
                stacklevel=3,
            )

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        every = self.every_n_steps is not None and state.global_step % self.every_n_steps == 0
        at_eval = self.at_evaluation and control.should_evaluate
        if every or at_eval:
            self._run(args, state, control, "evaluation" if at_eval else "every_n_steps", **kwargs)

    def on_epoch_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if self.at_evaluation and control.should_evaluate:
            self._run(args, state, control, "evaluation", **kwargs)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if logs is None or not self._pending or not self.log_key:
            return
        add_to_logs(state, logs, {self.log_key: json.dumps(self._pending, ensure_ascii=False)})
        self._pending = []
