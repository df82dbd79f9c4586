"""A trainer whose `__init__` waits on a worker process that never ends, and whose clean-up on the way out
waits again: the program neither returns nor lets an exception through, as a process pool's `__exit__`
waiting on deadlocked workers does."""

import multiprocessing
import time

from transformers import Trainer


class HangingCleanupTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(3600,))
        worker.start()
        try:
            worker.join()
        finally:
            time.sleep(3600)
