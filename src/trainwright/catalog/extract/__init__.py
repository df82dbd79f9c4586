"""The catalogue extractor: one release's facts read from its source with ``ast``, never imported.

``transformers_source`` and ``trl_source`` read one release of each library; ``facts`` holds what both
share (module namespaces, class graphs, dataclass fields, renames, fingerprints) and the merge into release
ranges. The maintainer builders in ``scripts/`` and the run-time additions (``trainwright catalog add``, the
installed release when it is newer than the catalogue) call the same functions, so both give the same facts.
"""
