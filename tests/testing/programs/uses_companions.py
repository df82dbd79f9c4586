"""A plain Trainer subclass whose module imports what 12 dev-split cases stopped at (wandb, nltk,
librosa, sentence_transformers, jieba, deepspeed): it runs only with the companions folder on the path."""

import deepspeed
import jieba
import librosa
import nltk
import sentence_transformers
import wandb
from transformers import Trainer


class CompanionsTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        run = wandb.init(project="oracle")  # disabled in the oracle's child: a no-op run
        names = (deepspeed, jieba, librosa, nltk, sentence_transformers, wandb)
        print("companions " + " ".join(m.__name__ for m in names) + f" {type(run).__name__}")
