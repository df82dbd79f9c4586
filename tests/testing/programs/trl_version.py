"""A project's DPO trainer printing the TRL it imported: on a 4.x release folder, that folder's own TRL
(the venv's TRL 1.16 needs transformers 5)."""

import trl
from trl import DPOTrainer


class VersionDPOTrainer(DPOTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print(f"trl {trl.__version__}")
