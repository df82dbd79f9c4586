"""No move (TW201 wrote one until 2026-12-07): a line of the logs appended to a file in the output folder
after `super().log()`, in a `log` override that then dispatches `on_log` a second time itself (a copied tail
of an old `Trainer.log`). Moved to `on_log`, the callback ran at both dispatches and wrote each line twice
where the override wrote it once (`scripts/move_oracle.py --releases 5.24.0`: `lines.txt` different in all four
phases). Written from `Trainer.log`, which dispatches `on_log` as its last statement."""

import os

from transformers import Trainer


class TwiceLoggedTrainer(Trainer):
    def log(self, logs, start_time=None):
        super().log(logs, start_time)
        with open(os.path.join(self.args.output_dir, "lines.txt"), "a") as f:
            f.write(f"step {self.state.global_step}: {sorted(logs)}\n")
        logs["epoch"] = self.state.epoch
        self.callback_handler.on_log(self.args, self.state, self.control, logs)
