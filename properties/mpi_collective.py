"""MPI collective properties (paper section 6.4, Scalasca's catalog).

mpi_collectives (a compound event, no metric) lists every member of every
complete MPI collective instance found by the EARL layer (coll(e) of section
4.3): the collective call's ENTER, its enter and leave times, the operation and
the root.  The waiting-time properties subscribe to it and compare each member
with the others of its instance.
"""
import numpy as np

from earlc.analysis import Instances, Property
from earlc.analysis import regions as rc
from earlc.analysis.reductions import (exclusive_running_max, group_max, group_min,
                                       member_with_largest)


class MpiCollectives(Property):
    measures = "quantity"
    name, title, metric, unit = "mpi_collectives", "MPI collective instances", False, "occ"
    description = "Every member of every complete MPI collective instance."

    column_kinds = {"instance": "instance", "location": "location", "root": "location",
                    "rank": "value", "op": "value"}

    def detect(self, ctx, subscribed):
        st = ctx.states
        inst, end = ctx.collective_members("mpi", complete_only=True)
        call = ctx.enter_of(end)
        ok = call >= 0
        inst, end, call = inst[ok], end[ok], call[ok]
        leave = ctx.leave_of(call, inside=end)
        ok = leave >= 0
        inst, end, call, leave = inst[ok], end[ok], call[ok], leave[ok]
        order = np.lexsort((end, inst))
        inst, end, call, leave = inst[order], end[order], call[order], leave[order]
        loc = ctx.events.location[end].astype(np.int64)
        # rank of each member in its communicator (for scans)
        comm_rank = np.full(len(end), -1, dtype=np.int64)
        comms = ctx.trace.communicators
        coll_comm = st.coll_comm[inst]
        for c in np.unique(coll_comm):
            cm = comms.get(int(c))
            if cm is None or cm.is_self:
                continue
            rank_of = np.full(ctx.n_locations + 1, -1, dtype=np.int64)
            members = np.asarray(cm.locations, dtype=np.int64)
            ok = members >= 0
            rank_of[members[ok]] = np.nonzero(ok)[0]
            sel = coll_comm == c
            comm_rank[sel] = rank_of[loc[sel]]
        enter_time = ctx.time_of(call)
        return Instances(call, np.zeros(len(call), np.int64), {
            "instance": inst, "end": end, "enter_time": enter_time,
            "leave_time": ctx.time_of(leave), "begin_time": _begin_times(ctx, call, end,
                                                                         enter_time),
            "end_time": ctx.time_of(end), "op": st.coll_op[inst].astype(np.int64),
            "root": st.coll_root[inst].astype(np.int64), "location": loc, "rank": comm_rank})


def _begin_times(ctx, call: np.ndarray, end: np.ndarray, enter_time: np.ndarray) -> np.ndarray:
    """Per member: the time of its MPI_COLLECTIVE_BEGIN (the last one before its
    MPI_COLLECTIVE_END on its location, inside its call), else its call's enter
    (enter_time; found for all members in one pass over the events, in C)."""
    t = enter_time.copy()
    begin = ctx.collective_begins(end, call)
    found = begin >= 0
    t[found] = ctx.time_of(begin[found])
    return t


class _CollectiveWait(Property):
    measures = "inefficiency"
    subscribes = "mpi_collectives"
    #: the call of the member each occurrence waits for (a picture's arrow)
    partner = "partner_call"
    ops = ()

    def members(self, coll):
        return coll.select(np.isin(coll["op"], self.ops))

    def waits(self, m):
        raise NotImplementedError

    def waited_for(self, m):
        """Per member: the call of the member of its instance it waits for (by
        default the one that began last), or None when there is no such one."""
        return member_with_largest(m, m["begin_time"])

    def detect(self, ctx, coll):
        m = self.members(coll)
        wait = self.waits(m)
        out = m.charged(wait)
        waited_for = self.waited_for(m)
        if waited_for is not None:
            out.columns["partner_call"] = waited_for[wait > 0]
        return out


# As Scalasca: a member's operation runs from its MPI_COLLECTIVE_BEGIN to its
# MPI_COLLECTIVE_END; waiting and completion times stay inside that interval.

def _wait_for_last(m):
    """max(0, min(latest begin, own end) - own begin)."""
    latest = np.minimum(group_max(m["instance"], m["begin_time"]), m["end_time"])
    return np.maximum(latest - m["begin_time"], 0)


def _completion(m):
    """max(0, own end - max(earliest end, min(latest begin, own end)))."""
    latest = np.minimum(group_max(m["instance"], m["begin_time"]), m["end_time"])
    first_end = np.maximum(group_min(m["instance"], m["end_time"]), latest)
    return np.maximum(m["end_time"] - first_end, 0)


def _wait_for_latest_of(m, counted, waiting):
    """For the `waiting` members: the latest begin among the `counted` members of
    the instance (at most the own end) minus their own begin; 0 elsewhere, and
    where none is counted."""
    none = np.iinfo(np.int64).min
    latest = group_max(m["instance"], np.where(counted, m["begin_time"], none))
    sel = waiting & (latest != none)  # no subtraction from the sentinel: it would wrap
    wait = np.zeros(len(sel), dtype=np.int64)
    wait[sel] = np.minimum(latest[sel], m["end_time"][sel]) - m["begin_time"][sel]
    return wait


class WaitAtBarrier(_CollectiveWait):
    name, title, parent = "wait_at_barrier", "Wait at Barrier", "mpi_synchronization"
    cube_id = "mpi_barrier_wait"
    ops = (rc.OP_BARRIER,)
    description = ("In an MPI_Barrier instance: max(begin of the members) - own begin, at most "
                   "up to the own end (begin and end: the MPI_COLLECTIVE_BEGIN and _END "
                   "records, else the call's enter and leave).")
    diagnosis = "Processes reach the barrier at different times: balance the work before it."

    def waits(self, m):
        return _wait_for_last(m)


class BarrierCompletion(_CollectiveWait):
    name, title, parent = "barrier_completion", "Barrier Completion", "mpi_synchronization"
    cube_id = "mpi_barrier_completion"
    ops = (rc.OP_BARRIER,)
    description = ("In an MPI_Barrier instance: own end - the first member's end (but not before "
                   "the last member began): the time to complete the barrier once it could.")
    diagnosis = "Time to leave the barrier after the first process could: the barrier's own cost."

    def waits(self, m):
        return _completion(m)

    def waited_for(self, m):
        return member_with_largest(m, -m["end_time"])  # the first to finish


class WaitAtNxN(_CollectiveWait):
    name, title, parent = "wait_at_nxn", "Wait at N x N", "mpi_collective"
    cube_id = "mpi_wait_nxn"
    ops = rc.OPS_NXN
    description = ("In an all-to-all operation (Allreduce, Allgather[v], Alltoall[v,w], "
                   "Reduce_scatter[_block]): max(begin of the members) - own begin, at most up "
                   "to the own end (MPI_COLLECTIVE_BEGIN and _END).")
    diagnosis = "Nobody leaves an N x N operation before the last member entered: balance the work before it."

    def waits(self, m):
        return _wait_for_last(m)


class NxNCompletion(_CollectiveWait):
    name, title, parent = "nxn_completion", "N x N Completion", "mpi_collective"
    cube_id = "mpi_nxn_completion"
    ops = rc.OPS_NXN
    description = ("In an all-to-all operation: own end - the first member's end (but not before "
                   "the last member began), from the MPI_COLLECTIVE_END records.")
    diagnosis = "The time to complete the operation once the first member could leave."

    def waits(self, m):
        return _completion(m)

    def waited_for(self, m):
        return member_with_largest(m, -m["end_time"])  # the first to finish


class LateBroadcast(_CollectiveWait):
    name, title, parent = "late_broadcast", "Late Broadcast", "mpi_collective"
    cube_id = "mpi_latebroadcast"
    ops = rc.OPS_ONE_TO_ALL
    description = ("In a one-to-all operation (Bcast, Scatter, Scatterv): a member other than the "
                   "root waits begin(root) - own begin, at most up to its own end.")
    diagnosis = "The root arrives late: the others wait for its data."

    def waits(self, m):
        is_root = m["location"] == m["root"]
        return _wait_for_latest_of(m, counted=is_root, waiting=~is_root)

    def waited_for(self, m):
        return member_with_largest(m, np.where(m["location"] == m["root"], 1, 0))


class EarlyReduce(_CollectiveWait):
    name, title, parent = "early_reduce", "Early Reduce", "mpi_collective"
    cube_id = "mpi_earlyreduce"
    ops = rc.OPS_ALL_TO_ONE
    description = ("In an all-to-one operation (Reduce, Gather, Gatherv): the root waits "
                   "max(begin of the other members) - own begin, at most up to its own end.")
    diagnosis = "The root arrives before the data it collects: it could compute meanwhile."

    def waits(self, m):
        is_root = m["location"] == m["root"]
        # a root alone in its communicator waits for nobody
        return _wait_for_latest_of(m, counted=~is_root, waiting=is_root)

    def waited_for(self, m):
        none = np.iinfo(np.int64).min
        return member_with_largest(m, np.where(m["location"] == m["root"], none,
                                                m["begin_time"]))


class EarlyScan(_CollectiveWait):
    name, title, parent = "early_scan", "Early Scan", "mpi_collective"
    cube_id = "mpi_earlyscan"
    ops = rc.OPS_SCAN
    description = ("In MPI_Scan / MPI_Exscan: the member of rank n waits max(begin of ranks "
                   "0..n-1) - own begin, at most up to its own end.")
    diagnosis = "Higher ranks wait for lower ones in a prefix operation."

    def waits(self, m):
        order = np.lexsort((m["rank"], m["instance"]))
        t = m["begin_time"][order]
        floor = int(t.min()) if len(t) else 0
        before = exclusive_running_max(m["instance"][order], t, floor - 1)
        wait = np.zeros(len(t), dtype=np.int64)
        has = before >= floor
        wait[has] = np.minimum(before[has], m["end_time"][order][has]) - t[has]
        out = np.zeros(len(t), dtype=np.int64)
        out[order] = wait
        return out

    partner = None  # one of the lower ranks: not one member for the whole instance

    def waited_for(self, m):
        return None


class WaitAtFinalize(Property):
    measures = "inefficiency"
    name, title, parent = "wait_at_finalize", "Wait at Finalize", "mpi_init_finalize"
    cube_id = "mpi_finalize_wait"
    description = ("In MPI_Finalize, taken as one collective of all processes (each process's "
                   "first MPI_Finalize call that returns): min(max(enter of all processes), "
                   "own leave) - own enter. As Scalasca does, the wait ends at the process's "
                   "own leave at the latest: where the clocks of the processes disagree so "
                   "much that a process left MPI_Finalize before the last one entered it (a "
                   "violated clock condition), the wait is the time the process spent inside "
                   "MPI_Finalize, not more.")
    diagnosis = "Processes finish at different times; the early ones wait in MPI_Finalize."

    partner = "partner_call"

    def detect(self, ctx, subscribed):
        fin = ctx.enters_of(ctx.finalize_region)  # ascending
        leave = ctx.leave_of(fin)
        fin, leave = fin[leave >= 0], leave[leave >= 0]
        _, first = np.unique(ctx.events.location[fin], return_index=True)
        fin, leave = fin[first], leave[first]  # one call per location
        if len(fin) == 0:
            return Instances.empty(partner_call=np.int64)
        t_enter = ctx.time_of(fin)
        wait = np.minimum(t_enter.max(), ctx.time_of(leave)) - t_enter
        keep = wait > 0
        last = fin[int(np.argmax(t_enter))]  # the process that came last
        return Instances(fin[keep], wait[keep], {"partner_call": np.full(int(keep.sum()), last)})


class MpiInitCompletion(Property):
    measures = "inefficiency"
    name, title, parent = "mpi_init_completion", "Initialization Completion", "mpi_init_finalize"
    cube_id = "mpi_init_completion"
    description = ("In MPI_Init / MPI_Init_thread, taken as one collective of all processes: "
                   "own leave - the first process's leave (but not before the last process "
                   "entered).")
    diagnosis = ("The MPI library's start-up after the processes could proceed: usually a "
                 "fixed cost, large only on many processes or a slow launcher.")

    partner = "partner_call"

    def detect(self, ctx, subscribed):
        init = ctx.enters_of_regions("MPI_Init", "MPI_Init_thread")
        if len(init) == 0:
            return Instances.empty(partner_call=np.int64)
        leave = ctx.leave_of(init)
        init, leave = init[leave >= 0], leave[leave >= 0]
        if len(init) == 0:
            return Instances.empty(partner_call=np.int64)
        t_enter, t_leave = ctx.time_of(init), ctx.time_of(leave)
        first_end = np.maximum(t_leave.min(), np.minimum(t_enter.max(), t_leave))
        completion = t_leave - first_end
        keep = completion > 0
        first = init[int(np.argmin(t_leave))]  # the process that finished first
        return Instances(init[keep], completion[keep],
                         {"partner_call": np.full(int(keep.sum()), first)})


PROPERTIES = (MpiCollectives, MpiInitCompletion, WaitAtFinalize, WaitAtBarrier, BarrierCompletion, WaitAtNxN,
              NxNCompletion, LateBroadcast, EarlyReduce, EarlyScan)
