"""Imports packages this machine does not have (as projects import a chemistry or plotting toolkit at
module top) and never uses them while training."""

import oracle_absent_toolkit.chem
from oracle_absent_logger import logger
from transformers import Trainer


class StandInTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.args.eval_strategy == "never":  # never true: the stand-ins stay untouched
            logger.info(oracle_absent_toolkit.chem.describe(inputs))
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
