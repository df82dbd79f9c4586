"""Reference callbacks: the timing and conditional logic that does not belong in Trainer subclasses."""

from trainwright._extras import require_train_extra

require_train_extra("trainwright.callbacks")
