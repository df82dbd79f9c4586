"""A program whose module logs at import and then cannot be set up (its project's own key file is
absent): what it printed must stay with it, never reach the next program's first phase."""

import logging

logging.getLogger("keys").error("Error loading API keys: no key file")
print("loading keys failed")

raise RuntimeError("this program needs its project's key file")
