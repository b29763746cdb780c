"""Classes of regions and collective operations, as Scalasca classifies them.

MPI calls are classified by name (Score-P gives MPI_Wait the role FUNCTION, so
roles alone do not tell a point-to-point call), through earlc.mpi_calls, the
one table of MPI calls; OpenMP constructs by role.
"""
from __future__ import annotations

import numpy as np

from .. import mpi_calls

#: calls that block until a receive they complete has its message
MPI_BLOCKING_RECEIVE = {"MPI_Recv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                        "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv"}
#: sends that may block until the receive is posted (synchronous or large)
MPI_BLOCKING_SEND = {"MPI_Send", "MPI_Ssend", "MPI_Rsend"}

# OTF2 collective operations (OTF2_CollectiveOp)
OP_BARRIER, OP_BCAST, OP_GATHER, OP_GATHERV, OP_SCATTER, OP_SCATTERV = 0, 1, 2, 3, 4, 5
OP_ALLGATHER, OP_ALLGATHERV, OP_ALLTOALL, OP_ALLTOALLV, OP_ALLTOALLW = 6, 7, 8, 9, 10
OP_ALLREDUCE, OP_REDUCE, OP_REDUCE_SCATTER, OP_SCAN, OP_EXSCAN = 11, 12, 13, 14, 15
OP_REDUCE_SCATTER_BLOCK = 16

OPS_NXN = (OP_ALLGATHER, OP_ALLGATHERV, OP_ALLTOALL, OP_ALLTOALLV, OP_ALLTOALLW, OP_ALLREDUCE,
           OP_REDUCE_SCATTER, OP_REDUCE_SCATTER_BLOCK)
OPS_ONE_TO_ALL = (OP_BCAST, OP_SCATTER, OP_SCATTERV)
OPS_ALL_TO_ONE = (OP_REDUCE, OP_GATHER, OP_GATHERV)
OPS_SCAN = (OP_SCAN, OP_EXSCAN)

#: region classes, in the order of their codes
CLASSES = ("user", "mpi_init_finalize", "mpi_barrier", "mpi_collective", "mpi_p2p", "mpi_other",
           "omp_parallel", "omp_barrier_explicit", "omp_barrier_implicit", "omp_critical",
           "omp_lock", "omp_other", "other_paradigm", "omp_construct", "overhead")
CLASS_CODE = {c: i for i, c in enumerate(CLASSES)}

#: OpenMP constructs whose time is the program's own work (loop bodies, single,
#: master, sections, tasks), as opposed to the runtime's (flush, atomic, ordered,
#: taskwait, API calls)
_OMP_WORK_ROLES = {"LOOP", "SECTIONS", "SECTION", "SINGLE", "SINGLE_SBLOCK", "MASTER",
                   "WORKSHARE", "TASK", "TASK_UNTIED", "ORDERED_SBLOCK"}

_OMP_LOCK_NAMES = {"omp_set_lock", "omp_unset_lock", "omp_set_nest_lock", "omp_unset_nest_lock",
                   "omp_test_lock", "omp_test_nest_lock"}


def classify(region) -> str:
    """The class of one earlc Region."""
    if region.paradigm == "MPI":
        call = mpi_calls.lookup(region.name)
        return call.cls if call is not None else "mpi_other"
    if region.paradigm == "OPENMP":
        role = region.role
        if role == "BARRIER":
            return "omp_barrier_explicit"
        if role == "IMPLICIT_BARRIER":
            return "omp_barrier_implicit"
        if role in ("CRITICAL", "CRITICAL_SBLOCK"):
            return "omp_critical"
        if region.name in _OMP_LOCK_NAMES:
            return "omp_lock"
        if role == "PARALLEL":
            return "omp_parallel"
        if role in _OMP_WORK_ROLES:
            return "omp_construct"
        return "omp_other"
    if region.paradigm == "MEASUREMENT_SYSTEM":
        return "overhead"
    if region.paradigm in ("USER", "COMPILER", "UNKNOWN", "SAMPLING", "NONE"):
        return "user"
    return "other_paradigm"


def region_tables(trace):
    """Per region ref: class code, name, and membership in the MPI call sets
    (arrays indexed by region ref, with one spare slot for 'no region')."""
    n = max((r.id for r in trace.regions), default=-1) + 2
    cls = np.full(n, CLASS_CODE["user"], dtype=np.int8)
    blocking_recv = np.zeros(n, dtype=bool)
    blocking_send = np.zeros(n, dtype=bool)
    finalize = np.zeros(n, dtype=bool)
    names = np.full(n, "", dtype=object)
    for r in trace.regions:
        cls[r.id] = CLASS_CODE[classify(r)]
        names[r.id] = r.name
        if r.paradigm == "MPI":
            blocking_recv[r.id] = r.name in MPI_BLOCKING_RECEIVE
            blocking_send[r.id] = r.name in MPI_BLOCKING_SEND
            finalize[r.id] = r.name == "MPI_Finalize"
    return cls, names, blocking_recv, blocking_send, finalize
