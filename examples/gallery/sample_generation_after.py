"""After: samples every 200 steps from a callback, written to a JSONL table and the reporters."""

from transformers import Trainer, TrainingArguments

from trainwright.callbacks import SampleGenerationCallback


def build_trainer(model, tokenizer, train_dataset, output_dir: str) -> Trainer:
    args = TrainingArguments(output_dir=output_dir)
    samples = SampleGenerationCallback(
        prompts=["Once upon a time"], every_n_steps=200, max_new_tokens=32, output_path=f"{output_dir}/samples.jsonl"
    )
    return Trainer(
        model=model, args=args, train_dataset=train_dataset, processing_class=tokenizer, callbacks=[samples]
    )
