"""OpenMP properties: waiting at explicit and implicit barriers, lock contention
(API locks and critical sections).

omp_barriers (a compound event, no metric) lists every member of every OpenMP
team barrier instance found by the EARL layer: the barrier region's ENTER, and
whether the barrier is explicit or implicit.
"""
import numpy as np

from earlc.analysis import Instances, Property
from earlc.analysis import regions as rc
from earlc.analysis.reductions import group_max, member_with_largest


class OmpBarriers(Property):
    measures = "quantity"
    name, title, metric, unit = "omp_barriers", "OpenMP barrier instances", False, "occ"
    description = "Every member of every OpenMP team barrier instance."

    column_kinds = {"instance": "instance"}

    def detect(self, ctx, subscribed):
        inst, leave = ctx.collective_members("omp_barrier")
        enter = ctx.enter_of(leave)
        ok = enter >= 0
        inst, leave, enter = inst[ok], leave[ok], enter[ok]
        order = np.lexsort((leave, inst))
        inst, leave, enter = inst[order], leave[order], enter[order]
        cls = ctx.region_class[ctx.region_of_enter(enter)]
        return Instances(enter, np.zeros(len(enter), np.int64), {
            "instance": inst, "leave": leave, "enter_time": ctx.time_of(enter),
            "explicit": cls == rc.CLASS_CODE["omp_barrier_explicit"]})


class _OmpBarrierWait(Property):
    measures = "inefficiency"
    parent, subscribes = "omp_barrier", "omp_barriers"
    partner = "partner_call"  # the thread that came last
    explicit = True

    def detect(self, ctx, b):
        wait = group_max(b["instance"], b["enter_time"]) - b["enter_time"]
        mine = b["explicit"] == self.explicit
        out = b.charged(wait, mine)
        out.columns["partner_call"] = member_with_largest(b, b["enter_time"])[(wait > 0) & mine]
        return out


class OmpBarrierWaitExplicit(_OmpBarrierWait):
    name, title = "omp_barrier_wait_explicit", "Wait at explicit barrier"
    cube_id = "omp_ebarrier_wait"
    description = "In an explicit OpenMP barrier instance: max(enter of the team) - own enter."
    diagnosis = "Threads reach the barrier at different times: balance the work before it."


class OmpBarrierWaitImplicit(_OmpBarrierWait):
    name, title = "omp_barrier_wait_implicit", "Wait at implicit barrier"
    cube_id = "omp_ibarrier_wait"
    explicit = False
    description = ("At the implicit barrier ending a worksharing construct or parallel region: "
                   "max(enter of the team) - own enter.")
    diagnosis = "Imbalanced loop iterations: try another schedule (dynamic, guided) or chunk size."


class LockContention(Property):
    measures = "inefficiency"
    partner = "release"  # the previous holder's release
    name, title, parent = "lock_contention", "Lock contention", "omp_locking"
    description = ("A thread enters a critical section or lock call while another thread holds "
                   "the lock: previous holder's release time - own enter of the acquiring "
                   "region (the release is the acquire's lockptr).")
    diagnosis = "Threads serialise on a lock: shorten the critical section or split the lock."

    def detect(self, ctx, subscribed):
        if not ctx.count_of_kind("THREAD_ACQUIRE_LOCK", "OMP_ACQUIRE_LOCK"):
            return Instances.empty(acquire=np.int64, release=np.int64, critical=bool)
        acq = ctx.events_of_kind("THREAD_ACQUIRE_LOCK", "OMP_ACQUIRE_LOCK")
        prev = ctx.pointer("lockptr", acq)
        ev = ctx.events
        ok = prev >= 0
        acq, prev = acq[ok], prev[ok]
        release = np.isin(ev.kind[prev], [ctx.kinds["THREAD_RELEASE_LOCK"],
                                          ctx.kinds["OMP_RELEASE_LOCK"]])
        other = ev.location[prev] != ev.location[acq]
        acq, prev = acq[release & other], prev[release & other]
        enter = ctx.enter_of(acq)
        ok = enter >= 0
        acq, prev, enter = acq[ok], prev[ok], enter[ok]
        wait = ctx.time_of(prev) - ctx.time_of(enter)
        keep = wait > 0
        critical = ctx.region_class[ctx.region_of_enter(enter)] == rc.CLASS_CODE["omp_critical"]
        return Instances(enter[keep], wait[keep], {"acquire": acq[keep], "release": prev[keep],
                                                   "critical": critical[keep]})


class _LockContentionKind(Property):
    measures = "inefficiency"
    partner = "release"
    parent = subscribes = "lock_contention"
    critical = True

    def detect(self, ctx, contention):
        return contention.select(contention["critical"] == self.critical)


class CriticalContention(_LockContentionKind):
    name, title = "lock_contention_critical", "Critical section contention"
    cube_id = "omp_lock_contention_critical"
    description = "Lock contention at the entry of an OpenMP critical section."
    diagnosis = "Threads queue for a critical section: shorten it, or use atomics or reductions."


class LockApiContention(_LockContentionKind):
    name, title = "lock_contention_api", "Lock API contention"
    cube_id = "omp_lock_contention_api"
    critical = False
    description = "Lock contention in omp_set_lock / omp_set_nest_lock."
    diagnosis = "Threads queue for an OpenMP lock: hold it shorter or use finer-grained locks."


class OmpManagement(Property):
    measures = "inefficiency"
    name, title, parent = "omp_management", "Thread management", "omp"
    cube_id = "omp_management"
    description = ("Creating and ending thread teams, on every thread of the team: from the "
                   "team's fork to the thread's enter of the parallel region, and from its "
                   "leave of the region to the team's join. Charged to the parallel region's "
                   "call path on each thread, whose time includes it (on a worker thread, "
                   "this time lies outside its own regions).")
    diagnosis = ("Many short parallel regions pay the team start-up and shut-down each time: "
                 "merge them, or use fewer threads for small ones.")

    column_kinds = {"fork_part": "ticks"}

    def detect(self, ctx, subscribed):
        enters, fork_part, join_part = ctx.thread_management()
        cost = fork_part + join_part
        keep = cost > 0
        return Instances(enters[keep], cost[keep], {"fork_part": fork_part[keep]})


class OmpFork(Property):
    measures = "inefficiency"
    name, title, parent, subscribes = "omp_fork", "Fork", "omp_management", "omp_management"
    cube_id = "omp_fork"
    description = ("The fork part of thread management: from the team's fork to each thread's "
                   "enter of the parallel region.")
    diagnosis = "Team start-up dominates: fewer, longer parallel regions amortise it."

    def detect(self, ctx, mgmt):
        return mgmt.charged(mgmt["fork_part"])


PROPERTIES = (OmpBarriers, OmpBarrierWaitExplicit, OmpBarrierWaitImplicit, LockContention,
              CriticalContention, LockApiContention, OmpManagement, OmpFork)
