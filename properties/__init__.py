"""earlc's built-in property catalog, as plugins.

Each module declares its properties beside their detection code, with the same
`earlc.analysis.Property` interface a user's plugin uses.  The catalog follows
EXPERT and Scalasca: Time > MPI > Communication > Point-to-point > Late Sender >
wrong order ..., with OpenMP beside MPI.  docs/properties.md is generated from
these declarations.
"""
from . import basic, counters, mpi_collective, mpi_p2p, openmp, rootcause, statistics

MODULES = (basic, mpi_p2p, mpi_collective, openmp, statistics, rootcause, counters)


def catalog():
    """A fresh instance of every built-in property, in catalog order."""
    return [cls() for module in MODULES for cls in module.PROPERTIES]
