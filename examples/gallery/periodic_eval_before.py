# expect: TW101 TW301 TW302
# expect-preview: TW203
"""Forcing an evaluation every 50 steps by overriding the private _maybe_log_save_evaluate, copied from
a 4.37 release: its signature has changed four times since."""

from transformers import Trainer


class FrequentEvalTrainer(Trainer):
    def _maybe_log_save_evaluate(self, tr_loss, model, trial, epoch, ignore_keys_for_eval):
        if self.state.global_step % 50 == 0:
            self.control.should_evaluate = True
        super()._maybe_log_save_evaluate(tr_loss, model, trial, epoch, ignore_keys_for_eval)
