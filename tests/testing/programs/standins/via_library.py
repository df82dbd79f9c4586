"""Imports, through a library module outside its own folder, a package this machine lacks."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "standins_lib"))

from oracle_taint_lib import HAS_VISION
from transformers import Trainer


class StandInTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.args.eval_strategy == "never":  # never true: the stand-in stays untouched
            print(HAS_VISION)
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
