"""``trainwright server``: the linter as a language server (LSP over stdio, built on pygls).

``session`` keeps what the server knows between requests (per project its settings and in-memory
project model; it lints a document's text and computes its fixes with the CLI's own engine and
fixer) and imports no LSP library; ``convert``, ``actions`` and ``hover`` turn findings into LSP
objects; ``app`` wires them to pygls. Only ``app`` and the modules it imports need pygls (the
``server`` extra); nothing else of the linter imports this package.
"""
