"""The project model: what the project's files define and how their classes relate.

``layout`` finds the file an import leads to, ``summary`` reads a module's names and classes,
``library`` knows the library classes (transformers, TRL, ...), ``mro`` linearises, and ``model``
ties them into the per-run ``ProjectModel`` the rules query.
"""
