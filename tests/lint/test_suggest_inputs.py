"""What a suggested callback is given instead of ``None``: the Trainer subclass's own settings as
``__init__`` arguments, and locals the event can compute again. What it cannot have stays a TODO."""

from __future__ import annotations

import textwrap

from lint_helpers import lint_snippet
from trainwright_lint.suggest import suggest

SOURCE = textwrap.dedent(
    """
    import os
    from transformers import Trainer

    class T(Trainer):
        def __init__(self, *args, every=25, tag=None, **kwargs):
            super().__init__(*args, **kwargs)
            self.every = every
            self.tag = tag or "run"

        def training_step(self, model, inputs, num_items_in_batch=None):
            loss = super().training_step(model, inputs, num_items_in_batch)
            folder = os.path.join(self.args.output_dir, "progress")
            if self.state.global_step % self.every == 0:
                print(self.tag, folder, self.state.global_step)
            return loss
    """
)


def the_suggestion() -> str:
    (finding,) = [f for f in lint_snippet(SOURCE) if f.code == "TW201"]
    text = suggest(SOURCE, finding, "pkg.train")
    assert text is not None
    return text


def test_settings_become_init_arguments_with_the_trainers_default() -> None:
    text = the_suggestion()
    assert "def __init__(self, every=25, tag=None):" in text
    assert "self.every = every  # was `T.every`\n" in text
    assert "self.tag = tag  # was `T.tag`  # TODO: pass the value of `T.tag`" in text  # no literal to show
    # A value without a literal comes from the trainer itself, never as None (issue 32).
    assert "trainer.add_callback(TTrainingStepCallback(every=25, tag=trainer.tag))" in text


def test_a_local_the_event_can_compute_is_computed_and_an_argument_is_no_finding() -> None:
    text = the_suggestion()
    assert 'folder = os.path.join(args.output_dir, "progress")' in text and "folder = None" not in text
    # Reading an argument no event receives (`num_items_in_batch`) is no proven move (issue 33, (b)).
    reads_argument = SOURCE.replace("self.tag, folder,", "self.tag, folder, num_items_in_batch,")
    assert [f for f in lint_snippet(reads_argument) if f.code == "TW201"] == []


RECOMPUTED = textwrap.dedent(
    """
    import os
    from transformers import Trainer

    class T(Trainer):
        def _save_checkpoint(self, model, trial):
            super()._save_checkpoint(model, trial)
            root = self.args.output_dir
            folder = os.path.join(root, f"checkpoint-{self.state.global_step}")
            kept = trial
            with open(os.path.join(folder, "extra.txt"), "w") as handle:
                handle.write(str(kept))
    """
)


def test_a_chain_of_locals_is_computed_again_when_the_event_has_what_it_reads() -> None:
    findings = [f for f in lint_snippet(RECOMPUTED, version="5.24.0") if f.code in ("TW201", "TW202")]
    texts = [suggest(RECOMPUTED, f, "pkg.train") for f in findings]
    (text,) = {t for t in texts if t is not None}
    assert "root = args.output_dir\n" in text
    assert 'folder = os.path.join(root, f"checkpoint-{state.global_step}")' in text
    assert "trial = None  # TODO" in text  # `kept` reads an argument of the override: no event has it
