"""The oracle tests' reference program: a timer around each micro-batch, a print at each evaluation,
and a notes file written with every save (checkpoints and the final ``save_model()``)."""

import os
import time

from transformers import Trainer


class ReferenceTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        start = time.perf_counter()
        loss = super().training_step(model, inputs, num_items_in_batch)
        print(f"micro-batch took {time.perf_counter() - start:.3f}s")
        return loss

    def evaluate(self, *args, **kwargs):
        print("evaluating at step", self.state.global_step)
        return super().evaluate(*args, **kwargs)

    def save_model(self, output_dir=None, _internal_call=False):
        super().save_model(output_dir, _internal_call)
        with open(os.path.join(output_dir or self.args.output_dir, "notes.txt"), "w") as f:
            f.write(f"saved at step {self.state.global_step}\n")
