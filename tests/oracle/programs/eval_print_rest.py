"""``eval_print.py`` once its print moved out: the suggestion for it is appended by the test."""

from transformers import Trainer


class EvalPrintTrainer(Trainer):
    pass
