"""The MPI calls earlc knows, in one table.

For each call: the region role Score-P records for it (what `TraceWriter`
gives a region named after it), the class of Scalasca's metric tree its time
belongs to (what the analysis charges it to, earlc.analysis.regions), and for
collectives the OTF2 operation (what `TraceWriter.collective` records).

The role and the class differ on purpose for a few calls: Score-P records
persistent-request set-up, MPI_Cancel and MPI_Request_free as point-to-point
regions and non-blocking collectives with their collective's role, while the
analysis, like Scalasca, counts as point-to-point or collective time only the
calls that transfer or complete messages, and the others as "mpi_other".
"""
from __future__ import annotations

from typing import Dict, NamedTuple, Optional

__all__ = ["MpiCall", "lookup"]


class MpiCall(NamedTuple):
    role: str                  # OTF2 region role name (OTF2_REGION_ROLE_*)
    cls: str                   # region class of the analysis (regions.CLASSES)
    op: Optional[str] = None   # OTF2 collective operation name, for collectives


def _table() -> Dict[str, MpiCall]:
    calls: Dict[str, MpiCall] = {}
    for name in ("init", "init_thread", "finalize", "initialized", "finalized"):
        calls[name] = MpiCall("FUNCTION", "mpi_init_finalize")
    collectives = {
        "barrier": ("BARRIER", "BARRIER"),
        "bcast": ("COLL_ONE2ALL", "BCAST"),
        "scatter": ("COLL_ONE2ALL", "SCATTER"),
        "scatterv": ("COLL_ONE2ALL", "SCATTERV"),
        "gather": ("COLL_ALL2ONE", "GATHER"),
        "gatherv": ("COLL_ALL2ONE", "GATHERV"),
        "reduce": ("COLL_ALL2ONE", "REDUCE"),
        "allgather": ("COLL_ALL2ALL", "ALLGATHER"),
        "allgatherv": ("COLL_ALL2ALL", "ALLGATHERV"),
        "allreduce": ("COLL_ALL2ALL", "ALLREDUCE"),
        "alltoall": ("COLL_ALL2ALL", "ALLTOALL"),
        "alltoallv": ("COLL_ALL2ALL", "ALLTOALLV"),
        "alltoallw": ("COLL_ALL2ALL", "ALLTOALLW"),
        "reduce_scatter": ("COLL_ALL2ALL", "REDUCE_SCATTER"),
        "reduce_scatter_block": ("COLL_ALL2ALL", "REDUCE_SCATTER_BLOCK"),
        "scan": ("COLL_OTHER", "SCAN"),
        "exscan": ("COLL_OTHER", "EXSCAN"),
    }
    for name, (role, op) in collectives.items():
        blocking_class = "mpi_barrier" if name == "barrier" else "mpi_collective"
        calls[name] = MpiCall(role, blocking_class, op)
        # non-blocking collectives: the barrier's waiting counts as barrier time
        calls["i" + name] = MpiCall(role, "mpi_barrier" if name == "barrier" else "mpi_other", op)
    for name in ("send", "bsend", "ssend", "rsend", "isend", "ibsend", "issend", "irsend",
                 "recv", "irecv", "sendrecv", "sendrecv_replace", "wait", "waitall", "waitany",
                 "waitsome", "test", "testall", "testany", "testsome", "probe", "iprobe",
                 "start", "startall", "mprobe", "mrecv", "improbe", "imrecv"):
        calls[name] = MpiCall("POINT2POINT", "mpi_p2p")
    for name in ("send_init", "bsend_init", "ssend_init", "rsend_init", "recv_init", "cancel",
                 "request_free"):
        calls[name] = MpiCall("POINT2POINT", "mpi_other")
    for name in ("put", "get", "accumulate", "get_accumulate", "fetch_and_op",
                 "compare_and_swap", "rput", "rget", "raccumulate", "rget_accumulate"):
        calls[name] = MpiCall("RMA", "mpi_other")
    return calls


_CALLS = _table()
_OTHER = MpiCall("FUNCTION", "mpi_other")
_WINDOW = MpiCall("RMA", "mpi_other")


def lookup(name: str) -> Optional[MpiCall]:
    """The call of a region name ("MPI_Allreduce"; the part after MPI_ in any case),
    None for a name that is no MPI call; an MPI call earlc does not list is a FUNCTION of class
    mpi_other (MPI_Win_* calls: RMA)."""
    if not name.startswith("MPI_"):
        return None
    op = name[4:].lower()
    call = _CALLS.get(op)
    if call is not None:
        return call
    return _WINDOW if op.startswith("win_") else _OTHER
