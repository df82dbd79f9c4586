"""trainwright_lint: lint rules for ``transformers.Trainer`` subclasses and ``TrainerCallback`` classes.

Depends only on libcst, flake8 and ``trainwright.catalog`` (pure data): a pre-commit hook that runs
it never imports torch or transformers.
"""

__version__ = "0.1.0"
