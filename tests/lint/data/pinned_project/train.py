"""A project pinned to transformers>=4.44,<4.46, written against a newer release: as written it fails
on 4.44 and 4.45 (the super() calls pass what those releases reject, the callback has no **kwargs).
The README's pre-commit hook fixes it for the pinned range, and then `python train.py` trains three
steps on a tiny model built from a config (no download) on 4.44 and on 4.45."""

import sys

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, Trainer, TrainerCallback, TrainingArguments


class PinnedTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        assert self.tokenizer is not None  # 4.44 and 4.45 have self.tokenizer: it must stay
        return super().training_step(model, inputs, num_items_in_batch)

    def log(self, logs, start_time=None):
        super().log(logs, start_time)


class LossPrinter(TrainerCallback):
    def on_log(self, args, state, control, logs=None):
        print("logged", sorted(logs or {}))


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    vocab = {"[PAD]": 0, "[UNK]": 1, **{w: i + 2 for i, w in enumerate("the quick brown fox jumps over a lazy dog".split())}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]")


class Batches(torch.utils.data.Dataset):
    def __init__(self, tokenizer: PreTrainedTokenizerFast) -> None:
        self.ids = tokenizer(["the quick brown fox", "jumps over a lazy dog"] * 4, padding="max_length", max_length=6)["input_ids"]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict:
        ids = torch.tensor(self.ids[i])
        return {"input_ids": ids, "labels": ids.clone()}


def main(output_dir: str) -> int:
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer()
    config = LlamaConfig(vocab_size=16, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    args = TrainingArguments(output_dir=output_dir, max_steps=3, logging_steps=1, per_device_train_batch_size=4, report_to=[], use_cpu=True, save_strategy="no")
    trainer = PinnedTrainer(model=LlamaForCausalLM(config), args=args, train_dataset=Batches(tokenizer), tokenizer=tokenizer, callbacks=[LossPrinter()])
    result = trainer.train()
    print(f"trained {result.global_step} steps on transformers", __import__("transformers").__version__)
    return 0 if result.global_step == 3 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "out"))
