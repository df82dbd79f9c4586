"""TW201: a print gated on the global step before `super()._maybe_log_save_evaluate()`. The loop calls that
method right after `on_step_end` and, at the end of each epoch, once more right after `on_epoch_end`:
the move runs the code at both, so it prints on the same calls (twice at an epoch's last step)."""

from transformers import Trainer


class StepReportTrainer(Trainer):
    def _maybe_log_save_evaluate(self, *args, **kwargs):
        if self.state.global_step % 2 == 0:
            print("step report", self.state.global_step)
        super()._maybe_log_save_evaluate(*args, **kwargs)
