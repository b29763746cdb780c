"""Long-term delay costs (Scalasca's backward replay, in the C core): the waiting
time a wait state propagates to later ones is a cost that flows back to the
wait states in its late side's interval, and from there to the delays that
caused them.  Wait states are taken latest first, so that the cost arriving at
each is complete when it is passed on.  Costs are tracked per source: the kind
of wait state they stem from (a DelayKind)."""
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from earlc import _core

from .intervals import Intervals
from .kinds import DelayKind
from .points import Points
from .records import CallPathMap, CollectiveInstances, KnownCosts, Replay, WaitBatch


@dataclass
class MessageDelays:
    """What the short-term delay costs of point-to-point wait states of one kind
    leave for the indirect, propagating and long-term costs, per wait state: the
    waiting event and its location, the delaying location and event (the late
    side's point, where the replay takes the wait state), the scale of its
    delays (waiting time over the denominator, at most 1), the waiting time of
    the late side at its points in between and the denominator (delays + that
    waiting time), its delays (one query each) and the late side's intervals
    (without their time maps: the points in between)."""
    kind: DelayKind
    waiter: np.ndarray
    waiter_location: np.ndarray
    delayer_location: np.ndarray
    delayer: np.ndarray
    scale: np.ndarray
    wait_sum: np.ndarray
    denominator: np.ndarray
    delays: CallPathMap
    late: Intervals


@dataclass
class IdleCosts:
    """Costs known before the replay: idle OpenMP workers make each wait of
    their master outside parallel regions cost its waiting time times the idle
    workers (point rows, float ticks)."""
    row: np.ndarray
    value: np.ndarray


def collective_inputs(kind: DelayKind, source: DelayKind):
    """What enters a collective wait state (an MPI collective or an OpenMP
    barrier) of `kind` as the amount to explain, for the long-term costs of
    `source`: the cost that later wait states of that source put on each member,
    and the members' own waiting time when the collective is of that source's
    kind.

    Scalasca's OpenMP barrier is the exception: its long-term costs take only the
    barrier's own waiting time there, never the cost arriving from later wait
    states (its OpenMP barrier long-term pattern has no input at OpenMP barriers),
    while the costs of every other source do pass through OpenMP barriers."""
    if kind == DelayKind.OMP_BARRIER:
        return ("wait",) if source == DelayKind.OMP_BARRIER else ("cost",)
    return ("cost", "wait") if source == kind else ("cost",)


def _inputs() -> bytes:
    """collective_inputs as the replay takes them: [kind * sources + source]."""
    bits = {"cost": _core.RC_INPUT_COST, "wait": _core.RC_INPUT_WAIT}
    n = len(DelayKind)
    inputs = np.zeros((n, n), dtype=np.uint8)
    for kind in DelayKind:
        for source in DelayKind:
            inputs[kind, source] = sum(bits[what] for what in collective_inputs(kind, source))
    return inputs.tobytes()


def long_term_costs(ctx, points: Points, messages: List[MessageDelays],
                    collectives: List[CollectiveInstances],
                    idle: Optional[IdleCosts] = None, parts=None):
    """The long-term delay costs per source, as (location, cnode, float ticks),
    and how many wait states the replay took out of order (a cycle of
    dependencies in an inconsistent trace; 0 otherwise).

    `messages`: the point-to-point wait states, per kind.  `collectives`: the
    instances of MPI collectives and OpenMP barriers: on a hybrid trace the costs
    of MPI wait states reach the master's OpenMP barrier waits and go on from
    there to the thread that was last at the barrier.  `idle` (see IdleCosts)
    depends on nothing later, so it is there from the start.  In parts
    (`parts`: this part) the wait states this part's locations delayed, with
    the other parts (replay_parts.py)."""
    replay = Replay(n_sources=len(DelayKind), inputs=_inputs(), point_event=points.event,
                    point_location=points.location, point_wait=points.wait)
    for d in messages:
        replay.waits.append(WaitBatch(
            source=int(d.kind), event=d.waiter, row=points.rows_of(d.waiter),
            delayer_location=d.delayer_location, delayer_event=d.delayer, scale=d.scale, denominator=d.denominator,
            delays=d.delays, between_offset=d.late.between_offset,
            between_row=d.late.between_row))
    replay.collectives = [c for c in collectives if len(c.member_offset) > 1]
    if idle is not None and len(idle.row):
        replay.costs.append(KnownCosts(source=int(DelayKind.OMP_IDLE), row=idle.row,
                                       value=idle.value))
    if parts is None:
        result = _core.rc_long_term(replay)
    else:
        from .replay_parts import replay_in_parts

        result = replay_in_parts(ctx, parts, replay, points)
    return {kind: (np.frombuffer(s["location"], np.int64), np.frombuffer(s["cnode"], np.int64),
                   np.frombuffer(s["value"], np.float64))
            for kind, s in zip(DelayKind, result["severity"])}, result["out_of_order"]
