"""The model card TRL writes with every checkpoint: ``output_dir/README.md`` carrying the model's tags.

``Trainer.create_model_card`` writes the card, but adds the model's ``model_tags`` (``trl``, ``dpo``,
PEFT's, ...) only on ``push_to_hub``; TRL's trainers write it with the tags at each checkpoint (from
their private ``_save_checkpoint``). :class:`ModelCardCallback` does the same from the public ``on_save``
event; it is trainer-owned: ``TrainerSkeleton.finish`` attaches it to both reference trainers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import Trainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments


class ModelCardCallback(TrainerCallback):
    """Write ``trainer``'s model card, with the model's tags, into ``output_dir`` at every checkpoint."""

    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        if not state.is_world_process_zero:
            return
        tags = list(getattr(self.trainer.model, "model_tags", None) or [])
        name = args.hub_model_id.split("/")[-1] if args.hub_model_id else Path(args.output_dir).name
        self.trainer.create_model_card(model_name=name, tags=tags)
