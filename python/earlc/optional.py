"""Optional dependencies (matplotlib for pictures, hatchet for GraphFrames): the
import, or one error that says what needs the package and how to install it."""
from __future__ import annotations

import importlib

from ._core import Error


class MissingDependency(Error, ImportError):
    """An optional package is not installed; the message says how to get it."""


def require(module: str, needed_by: str, pip_name: str):
    """The imported module, or MissingDependency('NEEDED_BY needs MODULE, which is
    not installed: pip install PIP_NAME')."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency("%s needs %s, which is not installed: pip install %s"
                                % (needed_by, module, pip_name)) from None
