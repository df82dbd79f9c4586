"""Imports TRL's `grpo_config`: TRL 0.17 (4.46.3's folder) appends `model_init_kwargs` to transformers'
module-level `_VALID_DICT_FIELDS` on import, so this program's own `TrainingArguments` fail there."""

import trl.trainer.grpo_config  # noqa: F401 - imported for its side effect on transformers
