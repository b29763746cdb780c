"""The kinds of wait states whose delays the root-cause analysis charges, and the
parts of their costs that properties publish.

A DelayKind is also the index of a *source* of the long-term replay (the kind of
wait state a cost stems from, csrc/include/earl_rootcause.h): the C core takes
the values as they are."""
from enum import Enum, IntEnum


class DelayKind(IntEnum):
    LATE_SENDER = 0
    LATE_RECEIVER = 1
    BARRIER = 2       # MPI_Barrier
    NXN = 3           # Allreduce, Allgather, Alltoall, Reduce_scatter
    ONE_TO_N = 4      # Bcast, Scatter: the receivers wait for the root
    N_TO_ONE = 5      # Reduce, Gather: the root waits for the latest sender
    OMP_BARRIER = 6   # an OpenMP barrier: the threads wait for the last one
    OMP_IDLE = 7      # worker threads idle while the master works alone


#: the kinds of MPI collective wait states
COLLECTIVE_KINDS = (DelayKind.BARRIER, DelayKind.NXN, DelayKind.ONE_TO_N, DelayKind.N_TO_ONE)


class Cost(Enum):
    """The part of a kind's costs a property publishes."""
    SHORT_TERM = "short_term"    # the delays that caused the wait directly
    LONG_TERM = "long_term"      # the delays behind the waits that propagated into it
    INDIRECT = "indirect"        # the part of the wait the late side spent waiting itself
    PROPAGATING = "propagating"  # waiting time that goes on to cause later waits
