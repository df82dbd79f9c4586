"""``base.py`` written differently (names, layout, an f-string built in two steps): trains the same."""

import os
import time

from transformers import Trainer


class ReferenceTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        began = time.perf_counter()
        result = super().training_step(model, inputs, num_items_in_batch)
        took = time.perf_counter() - began
        print(f"micro-batch took {took:.3f}s")
        return result

    def evaluate(self, *args, **kwargs):
        print("evaluating at step", self.state.global_step)
        return super().evaluate(*args, **kwargs)

    def save_model(self, output_dir=None, _internal_call=False):
        super().save_model(output_dir, _internal_call)
        path = os.path.join(output_dir or self.args.output_dir, "notes.txt")
        with open(path, "w") as f:
            f.write("saved at step %d\n" % self.state.global_step)  # noqa: UP031 - another spelling on purpose
