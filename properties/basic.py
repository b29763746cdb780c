"""The plain metrics: time split by paradigm and region class, visits, and
message counts and sizes.  Their values come from the call tree (exclusive time
per call path and location) and the message table, not from compound events."""
import numpy as np

from earlc.analysis import Property
from earlc.analysis import regions as rc

MPI_CLASSES = ("mpi_init_finalize", "mpi_barrier", "mpi_collective", "mpi_p2p", "mpi_other")
OMP_SYNC_CLASSES = ("omp_barrier_explicit", "omp_barrier_implicit", "omp_critical", "omp_lock")
#: the OpenMP runtime's own time (Scalasca's OpenMP time); thread management is added
OMP_CLASSES = ("omp_other",) + OMP_SYNC_CLASSES
#: the program's own work: user code, parallel region and worksharing bodies
COMP_CLASSES = ("user", "omp_parallel", "omp_construct", "other_paradigm")


def class_rows(ctx, classes=None, exclude=()):
    """(cnode, location, time) of the call tree rows on CPU locations whose region
    is of one of classes (None: any) and of none of exclude: accelerator streams
    are no CPU time."""
    ct = ctx.calltree
    cnode = ct.row_cnode.astype(np.int64)
    loc = ct.row_location.astype(np.int64)
    cpu = np.array([l.type == "CPU_THREAD" for l in ctx.trace.locations] + [False])
    keep = cpu[loc]
    if classes is not None or exclude:
        region = ct.region[cnode].astype(np.int64)
        spare = len(ctx.region_class) - 1
        region[region >= spare] = spare
        cls = ctx.region_class[region]
        if classes is not None:
            keep &= np.isin(cls, [rc.CLASS_CODE[c] for c in classes])
        if exclude:
            keep &= ~np.isin(cls, [rc.CLASS_CODE[c] for c in exclude])
    return cnode[keep], loc[keep], ct.row_time[keep].astype(np.int64)


def _management(ctx):
    """(cnode, location, ticks) of OpenMP thread management, by parallel region."""
    enters, fork_part, join_part = ctx.thread_management()
    return ctx.cnode[enters], ctx.events.location[enters], fork_part + join_part


class Time(Property):
    measures = "time"
    name, title, parent = "time", "Time", None
    cube_id = "time"
    description = ("Time spent in the program's regions on the CPU locations (processes and "
                   "threads; accelerator streams are not CPU time), summed over all "
                   "locations. Where a location records PROGRAM_BEGIN and PROGRAM_END, its "
                   "time runs from the one to the other: the program (named after the "
                   "executable) is the root of the call tree, visited once, and holds the "
                   "time no region covers.")
    diagnosis = "The reference for every percentage in this report."

    def totals(self, ctx):
        return class_rows(ctx)


class Execution(Property):
    measures = "time"
    name, title, parent = "execution", "Execution", "time"
    cube_id = "execution"
    description = "Time, without the measurement system's own overhead."
    diagnosis = "Splits into computation, MPI and OpenMP below."

    def totals(self, ctx):
        return class_rows(ctx, exclude=("overhead",))


class Overhead(Property):
    measures = "time"
    name, title, parent = "overhead", "Overhead", "time"
    cube_id = "overhead"
    description = ("Time in the measurement system's own regions (trace buffer flushes, "
                   "measurement switched off).")
    diagnosis = ("Buffer flushes during the run perturb it: give the tracer more memory or "
                 "filter short, frequent functions.")

    def totals(self, ctx):
        return class_rows(ctx, ("overhead",))


class Computation(Property):
    measures = "time"
    name, title, parent = "comp", "Computation", "execution"
    cube_id = "comp"
    description = ("Time in the program's own work: user code, and the bodies of OpenMP "
                   "parallel regions and worksharing constructs, without the thread "
                   "management charged to the parallel regions.")
    diagnosis = "Where the program computes: compare across locations for load imbalance."

    def totals(self, ctx):
        c, l, v = class_rows(ctx, COMP_CLASSES)
        mc, ml, mv = _management(ctx)
        return (np.concatenate((c, mc)), np.concatenate((l, ml)), np.concatenate((v, -mv)))


class Mpi(Property):
    measures = "time"
    name, title, parent, region_class = "mpi", "MPI", "execution", MPI_CLASSES
    cube_id = "mpi"
    description = "Time spent in MPI calls."
    diagnosis = "A large share of MPI time points to communication or synchronisation costs; see its children."


class MpiInitFinalize(Property):
    measures = "time"
    name, title, parent, region_class = "mpi_init_finalize", "Init/Finalize", "mpi", ("mpi_init_finalize",)
    description = "Time in MPI_Init, MPI_Init_thread, MPI_Finalize and their queries."
    diagnosis = "Usually fixed start-up and shut-down cost; waiting in MPI_Finalize is shown below."


class MpiSynchronization(Property):
    measures = "time"
    name, title, parent, region_class = "mpi_synchronization", "Synchronization", "mpi", ("mpi_barrier",)
    description = "Time in MPI_Barrier."
    diagnosis = "Barriers wait for the slowest process: look at Wait at Barrier."


class MpiCommunication(Property):
    measures = "time"
    name, title, parent = "mpi_communication", "Communication", "mpi"
    region_class = ("mpi_p2p", "mpi_collective")
    description = "Time in MPI point-to-point and collective communication calls."
    diagnosis = "See point-to-point and collective below."


class MpiPointToPoint(Property):
    measures = "time"
    name, title, parent, region_class = "mpi_point2point", "Point-to-point", "mpi_communication", ("mpi_p2p",)
    description = "Time in MPI point-to-point calls (send, receive, wait, test, probe)."
    diagnosis = "Waiting states in point-to-point communication are itemised below."


class MpiCollective(Property):
    measures = "time"
    name, title, parent, region_class = "mpi_collective", "Collective", "mpi_communication", ("mpi_collective",)
    description = "Time in MPI collective operations other than MPI_Barrier."
    diagnosis = "Waiting states of collective operations are itemised below."


class OpenMP(Property):
    measures = "time"
    name, title, parent = "omp", "OpenMP", "execution"
    cube_id = "omp_time"
    description = ("Time in the OpenMP runtime: thread management, barriers, critical "
                   "sections, locks and other OpenMP API calls and constructs (flush, atomic, "
                   "ordered, taskwait). The bodies of parallel regions and worksharing "
                   "constructs are computation.")
    diagnosis = "See thread management and synchronisation below."

    def totals(self, ctx):
        c, l, v = class_rows(ctx, OMP_CLASSES)
        mc, ml, mv = _management(ctx)
        return (np.concatenate((c, mc)), np.concatenate((l, ml)), np.concatenate((v, mv)))


class OmpSynchronization(Property):
    measures = "time"
    name, title, parent, region_class = "omp_synchronization", "Synchronization", "omp", OMP_SYNC_CLASSES
    description = "Time in OpenMP barriers, critical sections and lock calls."
    diagnosis = "Threads waiting for each other: itemised below."


class OmpBarrier(Property):
    measures = "time"
    name, title, parent = "omp_barrier", "Barrier", "omp_synchronization"
    region_class = ("omp_barrier_explicit", "omp_barrier_implicit")
    description = "Time in explicit and implicit OpenMP barriers."
    diagnosis = "Load imbalance inside parallel regions shows up here."


class OmpLocking(Property):
    measures = "time"
    name, title, parent = "omp_locking", "Critical and locks", "omp_synchronization"
    region_class = ("omp_critical", "omp_lock")
    description = "Time in OpenMP critical sections and lock API calls."
    diagnosis = "Contention for a lock is itemised below."


class IdleThreads(Property):
    measures = "inefficiency"
    name, title = "idle_threads", "Idle threads"
    description = ("Time a worker thread spends with no region of its own open while its "
                   "master's frames are inherited: between the parallel regions of its team, "
                   "waiting for work. Charged to the master's call path that forked the team, "
                   "on the worker. Not part of Time, which counts what the locations run "
                   "(as Scalasca's Time on traces of thread teams does).")
    diagnosis = ("Worker threads wait while the master runs serial code (MPI calls included): "
                 "parallelise more of the program or use fewer threads.")

    def totals(self, ctx):
        ct = ctx.calltree
        return ct.row_cnode, ct.row_location, ct.row_idle.astype(np.int64)


class Visits(Property):
    measures = "quantity"
    name, title, unit = "visits", "Visits", "occ"
    cube_id = "visits"
    description = "Number of times each call path was entered."
    diagnosis = "Many short visits of an MPI call suggest aggregating messages."

    def totals(self, ctx):
        ct = ctx.calltree
        return ct.row_cnode, ct.row_location, ct.row_visits.astype(np.int64)


class MessagesSent(Property):
    measures = "quantity"
    name, title, unit = "messages_sent", "Messages sent", "occ"
    description = "Point-to-point messages sent (MPI_SEND and MPI_ISEND records)."
    diagnosis = "Compare with bytes sent: many small messages cost latency."

    def totals(self, ctx):
        cnode, loc, records, _, _ = ctx.message_sums()[0]
        return cnode, loc, records


class BytesSent(Property):
    measures = "quantity"
    name, title, unit = "bytes_sent", "Bytes sent", "bytes"
    cube_id = "bytes_sent"
    description = "Bytes sent in point-to-point messages."
    diagnosis = "The communication volume per call path and process."

    def totals(self, ctx):
        cnode, loc, _, _, total = ctx.message_sums()[0]
        return cnode, loc, total


class BytesReceived(Property):
    measures = "quantity"
    name, title, unit = "bytes_received", "Bytes received", "bytes"
    cube_id = "bytes_rcvd"
    description = "Bytes received in point-to-point messages."
    diagnosis = "The communication volume per call path and process."

    def totals(self, ctx):
        cnode, loc, _, _, total = ctx.message_sums()[1]
        return cnode, loc, total


PROPERTIES = (Time, Execution, Computation, Mpi, MpiInitFinalize, MpiSynchronization,
              MpiCommunication, MpiPointToPoint, MpiCollective, OpenMP, Overhead,
              OmpSynchronization, OmpBarrier, OmpLocking, IdleThreads, Visits, MessagesSent,
              BytesSent, BytesReceived)
