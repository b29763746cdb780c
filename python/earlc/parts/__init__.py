"""A trace analysed in parts: each part holds whole locations.

The largest traces come from runs of thousands of processes and do not fit in
one machine's memory.  earlc then splits the locations into parts (whole
processes with their threads, in contiguous blocks balanced by their event
counts, plan.py), and each part holds every event of its own locations plus
the *ghosts*: the events of other locations that its own events point to (the
other side of each message, the members of each collective, the calls around
them; csrc/include/earl_part.h).  The parts run on MPI processes (mpi.py), and
every result is the one of the whole trace: the built-in properties run
unchanged on each part, each part's severities of its own locations are
merged, and what crosses parts (the root causes' costs, the happened-before
clocks) travels between them.

Modules, by concept: plan.py (which locations each part holds), exchange.py
(how parts talk: one process, or MPI), part.py (a part's trace: own events
and ghosts, and the whole trace's event ids).
"""
from .exchange import (Exchange, MPIUnavailable, PartsFailed, Serial, mpi_exchange,
                       mpi_world_rank, mpi_world_size)
from .plan import Partition, plan
from .part import Part, open_part

__all__ = ["Exchange", "Serial", "MPIUnavailable", "PartsFailed", "mpi_exchange",
           "mpi_world_size", "mpi_world_rank", "Partition", "plan", "Part", "open_part",
           "under_mpi"]


def under_mpi() -> bool:
    """Whether this process was started by mpiexec with other processes: the
    command line then analyses the trace in parts, one per process."""
    return (mpi_world_size() or 1) > 1
