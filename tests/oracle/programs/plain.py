"""No override: the Trainer as the release ships it (the reference for what a release itself changes)."""
