"""A plain Trainer subclass whose module imports ``datasets`` (19 dev-split cases do): it must import
on a 4.x release folder too, with that folder's own ``datasets``."""

import datasets
from transformers import Trainer


class DatasetsTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        print(f"datasets {datasets.__version__.split('.')[0]}.x")
