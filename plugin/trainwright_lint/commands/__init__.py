"""Sub-commands of the ``trainwright`` console script (one module each, see ``trainwright_lint.cli``)."""
