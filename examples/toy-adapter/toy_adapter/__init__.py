"""toy_adapter: an out-of-tree PrivateUse1 adapter that checks its environment first.

The first thing an adapter does is ask adapter-matrix whether this process (Python,
torch, the driver) is a combination its ``compat.yaml`` supports. ``require`` raises
``adapter_matrix.UnsupportedEnvironment`` with the fix on a plain import and warns under
torch's autoload (an exception there would break ``import torch``); ``support.shim`` is
the era module that serves the running torch.
"""

import importlib

from adapter_matrix import require

__version__ = "1.0.0"

support = require(__name__, version=__version__)
if support.usable:
    importlib.import_module(support.shim).activate()


def _autoload() -> None:
    """The ``torch.backends`` entry point: importing this package did the work."""
