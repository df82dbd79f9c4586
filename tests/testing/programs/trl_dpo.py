"""A project's DPO trainer (TRL): the oracle must hand it a ``datasets.Dataset`` of preference rows."""

from trl import DPOTrainer


class ProjectDPOTrainer(DPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print(f"train data: {type(self.train_dataset).__name__}")
