"""A trainer whose `__init__` waits on a worker process that never ends, and whose clean-up on the way out
starts another worker and waits again: the program neither returns nor lets an exception through, and leaves
a process started after the deadline, as a process pool's `__exit__` waiting on deadlocked workers did."""

import multiprocessing
import time

from transformers import Trainer


class HangingCleanupTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        fork = multiprocessing.get_context("fork")
        worker = fork.Process(target=time.sleep, args=(3600,))
        worker.start()
        try:
            worker.join()
        finally:
            fork.Process(target=time.sleep, args=(3600,)).start()  # outlives the child unless it is ended
            time.sleep(3600)
