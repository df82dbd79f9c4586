"""A trainer whose `__init__` never returns: it starts a worker process and waits for it, as
`dataset.map(num_proc=...)` does when workers forked after torch's threads deadlock. The worker holds the
pipes the oracle's parent reads."""

import multiprocessing
import time

from transformers import Trainer


class HangingTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(3600,))
        worker.start()
        worker.join()
