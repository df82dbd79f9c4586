"""A library module (outside the program's folder) that imports a package this machine lacks, as
transformers' image processing imports torchvision: it stays imported after the program that loaded it."""

import oracle_absent_vision

HAS_VISION = oracle_absent_vision is not None
