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

On one machine whose memory the trace does not fit, the same parts run one
after another in one process, with what crosses parts spilled to a scratch
folder (inturn.py; docs/memory.md): `earlc.analyze(path, memory="8G")`, or
`in_turn(path)` for the parts themselves, one at a time.

Modules, by concept: plan.py (which locations each part holds), exchange.py
(how parts talk: one process, or MPI), part.py (a part's trace: own events
and ghosts, and the whole trace's event ids), merge.py (the findings of the
parts, merged into one report), inturn.py (the parts one after another
within a memory budget), budget.py (budgets and what an analysis needs),
scratch.py (the scratch folder), spill.py (what the numbering needs of every
part, spilled), page.py (the HTML page from the parts' shares) and
page_inturn.py (that page from parts one after another).
"""
from .exchange import (Exchange, MPIUnavailable, PartsFailed, Serial, mpi_exchange,
                       mpi_world_rank, mpi_world_size)
from .plan import Partition, plan
from .part import Part, collectives_for, open_part
from .budget import BudgetError
from .scratch import ScratchError
from .inturn import InTurn

__all__ = ["Exchange", "Serial", "MPIUnavailable", "PartsFailed", "mpi_exchange",
           "mpi_world_size", "mpi_world_rank", "Partition", "plan", "Part", "open_part", "collectives_for",
           "under_mpi", "in_turn", "InTurn", "BudgetError", "ScratchError"]


def in_turn(path, memory=None, scratch=None, parts=None, threads: int = 0,
            salvage: bool = False, progress=None, collectives: str = "all"):
    """The parts of the trace at path one after another, each within the
    memory budget (a size such as "8G"; None: what the machine has
    available), or in `parts` parts: an InTurn, a context manager whose
    iteration gives each Part in turn (part.trace: its own events and the
    ghosts; part.own: a bool per location).  A part is let go when the next
    is asked for.  The scratch folder (scratch, default the system's
    temporary folder) is removed when the block ends.

        with earlc.parts.in_turn("big/traces.otf2", memory="8G") as parts:
            for part in parts:
                print(part.index, len(part.trace), part.own.sum())

    collectives: "all" (each part has every member of the collectives it
    takes part in), "representatives" (only the members the built-in wait
    states read) or "delayers" (those, and what the root causes read: each
    instance's delaying member, and every member in its part; docs/memory.md)."""
    from .budget import DEFAULT, parse_size
    from .inturn import InTurn, choose_budget
    from .part import COLLECTIVES

    if collectives not in COLLECTIVES:
        raise ValueError("collectives must be 'all', 'delayers' or 'representatives', not %r"
                         % (collectives,))
    budget = choose_budget(memory) if parts is None else (parse_size(memory) if memory
                                                           else 1 << 62)
    if budget is None:
        raise BudgetError("the machine does not say how much memory it has available: give "
                          "memory= or parts=")
    return InTurn(path, budget, scratch=scratch, threads=threads, salvage=salvage,
                  progress=progress, model=DEFAULT, parts=parts,
                  collectives=collectives)


def under_mpi() -> bool:
    """Whether this process was started by mpiexec with other processes: the
    command line then analyses the trace in parts, one per process."""
    return (mpi_world_size() or 1) > 1
