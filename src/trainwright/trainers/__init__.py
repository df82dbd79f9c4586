"""Reference trainers: subclasses of ``transformers.Trainer`` that override public methods only."""

from trainwright._extras import require_train_extra

require_train_extra("trainwright.trainers")
