"""adapter-matrix: one compat.yaml for an out-of-tree PyTorch backend's version matrix.

Importing this package is cheap on purpose (it runs inside ``import torch`` under
autoload): the modules load only what they use.
"""

__version__ = "0.1.0"
