"""Files and module state that must survive a crash, below both ``trainers`` and ``callbacks``.

Why a package of its own: the trainers attach callbacks (``trainers`` imports ``callbacks``), and
both write checkpoint files. What they share lives here, so the dependency runs one way
(``trainers`` → ``callbacks`` → ``storage``) and no package re-exports another's names.

* :mod:`~trainwright.storage.atomic`: the one crash-safe write (temporary file, fsync of the file,
  rename, fsync of the folder) and the crash-safe JSONL append; standard library only.
* :mod:`~trainwright.storage.tensor_files`: ``.pt`` files read with tensors and plain data only, and
  written through the atomic write.
* :mod:`~trainwright.storage.module_state`: a module's whole state dict, FSDP2-sharded or not.
"""
