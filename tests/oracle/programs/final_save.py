"""``base.py`` with its notes file written in ``on_save``: checkpoints get it, the final
``trainer.save_model()`` (which fires no event) does not."""

import os

from base import ReferenceTrainer as _Base
from transformers import TrainerCallback


class ReferenceTrainer(_Base):
    def save_model(self, output_dir=None, _internal_call=False):
        super(_Base, self).save_model(output_dir, _internal_call)


class NotesCallback(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        with open(os.path.join(folder, "notes.txt"), "w") as f:
            f.write(f"saved at step {state.global_step}\n")
