"""OpenMP properties: waiting at explicit and implicit barriers, lock contention
(API locks and critical sections).

omp_barriers (a compound event, no metric) lists every member of every OpenMP
team barrier instance found by the EARL layer: the barrier region's ENTER, and
whether the barrier is explicit or implicit.
"""
import numpy as np

from earlc.analysis import Instances, Property
from earlc.analysis import regions as rc

from .groups import group_max, instance_members

COLL_OMP_BARRIER = 1


class OmpBarriers(Property):
    name, title, metric, unit = "omp_barriers", "OpenMP barrier instances", False, "occ"
    description = "Every member of every OpenMP team barrier instance."

    def detect(self, ctx, subscribed):
        inst, leave = instance_members(ctx, COLL_OMP_BARRIER)
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
    parent, subscribes = "omp_barrier", "omp_barriers"
    explicit = True

    def detect(self, ctx, b):
        wait = group_max(b["instance"], b["enter_time"]) - b["enter_time"]
        return b.charged(wait, b["explicit"] == self.explicit)


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
    name, title = "omp_management", "Thread management"
    cube_id = "omp_management"
    description = ("Fork and join of thread teams as the master experiences them: from its "
                   "fork to the last team member's THREAD_TEAM_BEGIN, and from the last "
                   "member's THREAD_TEAM_END to its join. Charged to the fork's call path on "
                   "the master. A root metric: this time lies inside the master's own regions "
                   "and is part of Time there.")
    diagnosis = "Many short parallel regions pay the team start-up each time: merge them."

    def detect(self, ctx, subscribed):
        if not ctx.count_of_kind("THREAD_FORK", "OMP_FORK"):
            return Instances.empty(join=np.int64)
        ev = ctx.events
        forks = ctx.events_of_kind("THREAD_FORK", "OMP_FORK")
        joins = ctx.events_of_kind("THREAD_JOIN", "OMP_JOIN")
        join_of = _pair_forks_and_joins(ev, forks, joins)
        begins = ctx.events_of_kind("THREAD_TEAM_BEGIN")
        ends = ctx.events_of_kind("THREAD_TEAM_END")
        last_begin = _latest_per_fork(ctx, ctx.pointer("forkptr", begins), begins, forks)
        last_end = _latest_per_fork(ctx, ctx.pointer("forkptr", ends), ends, forks)
        t_fork = ctx.time_of(forks)
        start = np.where(last_begin >= 0, last_begin - t_fork, 0)
        has_join = join_of >= 0
        stop = np.where(has_join & (last_end >= 0),
                        ctx.time_of(np.maximum(join_of, 0)) - last_end, 0)
        cost = np.maximum(start, 0) + np.maximum(stop, 0)
        keep = cost > 0
        return Instances(forks[keep], cost[keep], {"join": join_of[keep]})


def _latest_per_fork(ctx, fork_of: np.ndarray, events: np.ndarray, forks: np.ndarray) -> np.ndarray:
    """Per fork (in the order of forks): the latest time among events whose
    forkptr is that fork, -1 when none."""
    out = np.full(len(forks), -1, dtype=np.int64)
    ok = fork_of >= 0
    pos = np.searchsorted(forks, fork_of[ok])
    np.maximum.at(out, pos, ctx.time_of(events[ok]))
    return out


def _pair_forks_and_joins(ev, forks: np.ndarray, joins: np.ndarray) -> np.ndarray:
    """The join closing each fork: forks and joins nest per location like brackets."""
    out = np.full(len(forks), -1, dtype=np.int64)
    pos_of = {int(f): k for k, f in enumerate(forks)}
    marks = np.concatenate((forks, joins))
    is_fork = np.concatenate((np.ones(len(forks), bool), np.zeros(len(joins), bool)))
    order = np.lexsort((marks, ev.location[marks]))
    open_forks = {}
    for m, f in zip(marks[order].tolist(), is_fork[order].tolist()):
        loc = int(ev.location[m])
        stack = open_forks.setdefault(loc, [])
        if f:
            stack.append(m)
        elif stack:
            out[pos_of[stack.pop()]] = m
    return out


PROPERTIES = (OmpBarriers, OmpBarrierWaitExplicit, OmpBarrierWaitImplicit, LockContention,
              CriticalContention, LockApiContention, OmpManagement)
