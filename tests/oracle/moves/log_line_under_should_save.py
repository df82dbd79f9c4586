"""TW202: a log line after each checkpoint, under `if self.args.should_save:` (a condition of
`Trainer._save_checkpoint` too, but the line under it is the user's). The move logs it at `on_save`."""

import logging

from transformers import Trainer

logger = logging.getLogger(__name__)


class SaveLogTrainer(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            logger.warning("saved checkpoint at step %d", self.state.global_step)
