"""Test tools for projects that customise ``transformers.Trainer``: the behaviour oracle.

``trainwright.testing.oracle`` runs a user module's Trainer subclass and callbacks on a tiny real
model, in a subprocess and against a chosen transformers release, and records what training did;
``compare`` lists, field by field, where two such records differ. The linter uses it (through
``scripts/oracle_matrix.py`` and the tests) to call a fix safe only when training stays the same.

Why a subprocess: the linter side never imports torch or transformers, and a second transformers
release (installed beside the pinned one with ``pip install --target``) can only be loaded in a fresh
interpreter. This package's parent side (``oracle``, ``records``, ``compare``, ``releases``) imports
neither; only ``_runner`` and the helpers it loads in the child do.
"""
