"""Root causes of wait states: delay costs (Böhme et al., "Identifying the root
causes of wait states in large-scale parallel applications"), as Scalasca
computes them.

A wait state (a Late Sender, a Late Receiver) happens at a *synchronisation
point* of the waiting location with the location it waits for.  Both locations
met before, at their previous synchronisation point with each other; since then
the late one has spent more time in some call paths than the waiting one: those
excess times are the *delays* that caused the wait.  The short-term delay cost
charges the waiting time to them (scaled down when they exceed it, and shared
with the waiting time that the late location itself spent at synchronisation
points in between, which propagates from elsewhere).

Synchronisation points, per location (the events where two or more locations
are known to meet):
- a Late Sender's receive and the matched send; a Late Receiver's send
  completion and the receive's posting event;
- MPI collectives where someone waits (MPI_COLLECTIVE_END: every member of a
  barrier; N x N members overlapping the latest sender; the root and the
  receivers waiting for it in 1-to-N; the root and the latest sender in N-to-1);
- the leaves of MPI_Init and MPI_Finalize (everybody).
Each carries its waiting time, its call's duration and its completion time; the
time of a synchronisation interval is the exclusive time per call path between
two of them (counted at ENTER and LEAVE events), without the waiting time spent
at the synchronisation points in between, and without the part of the first
one's call before its completion.

On hybrid MPI+OpenMP traces the OpenMP barriers are wait states too (the last
thread delays the others), and so is the time worker threads idle while the master
works outside parallel regions; long-term costs cross both: a cost on the master's
barrier wait goes on to the last thread, and idle workers make every wait of the
master between a join and the next fork cost that many times its waiting time.

The package, by concept: kinds.py (the kinds of wait states and the parts of
their costs), points.py (the synchronisation points and the wait states at
them: sync_points(ctx), a SyncPoints record), intervals.py (the time between
them per call path, where two locations last met), delays.py (short-term delay
costs, indirect and propagating waits, and their properties), longterm.py (the
long-term replay), critical_path.py (the critical path and its metrics),
arrays.py (numpy helpers they share) and records.py (what crosses to the C
core).  The loops over every event, interval and wait state run in the C core
(csrc/include/earl_rootcause.h, reached through earlc._core.rc_*, each
function taking records whose fields are those of the C structs): the time
chunks, the synchronisation intervals and the delays' excess, the group
interval starts of collectives, the long-term backward replay and the critical
path's walk; the package finds the points and wait states and keeps the rest in
numpy.
"""
from .critical_path import (CriticalImbalanceImpact, CriticalPath, CriticalPathActivities,
                            CriticalPathTrace, NonCriticalPathActivities)
from .delays import (Delay12N, Delay12NLongTerm, DelayBarrier, DelayBarrierLongTerm,
                     DelayLateReceiver, DelayLateReceiverLongTerm, DelayLateSender,
                     DelayLateSenderLongTerm, DelayN21, DelayN21LongTerm, DelayNxN,
                     DelayNxNLongTerm, DelayOmpBarrier, DelayOmpBarrierLongTerm, DelayOmpIdle,
                     DelayOmpIdleLongTerm, IndirectLateReceiver,
                     IndirectLateSender, PropagatingLateReceiver, PropagatingLateSender)

PROPERTIES = (DelayLateSender, DelayLateReceiver, DelayBarrier, DelayNxN, Delay12N, DelayN21,
              DelayOmpBarrier, DelayOmpIdle, DelayLateSenderLongTerm, DelayBarrierLongTerm,
              DelayNxNLongTerm, Delay12NLongTerm, DelayN21LongTerm, DelayLateReceiverLongTerm,
              DelayOmpBarrierLongTerm, DelayOmpIdleLongTerm,
              IndirectLateSender, IndirectLateReceiver, PropagatingLateSender,
              PropagatingLateReceiver, CriticalPath, CriticalPathActivities,
              CriticalImbalanceImpact, NonCriticalPathActivities, CriticalPathTrace)
