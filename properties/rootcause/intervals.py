"""Synchronisation intervals: the exclusive time per call path that a location
spends between two of its synchronisation points (counted at ENTER and LEAVE
events), without the waiting time at the points in between; the building block
of delay costs and of the critical path.  Also where two locations last met (the
start of a wait state's interval) and where a collective's delayer last met its
communicator (the start of a group interval)."""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from earlc import _core
from earlc.analysis.schedule import beside

from .records import (CallPathMap, ChunkTable, EventChunks, EventColumns, ExcessPairs,
                      GroupQueries, MeetingQueries, Meetings, PairPoints, PointsByLocation,
                      Spans, TimeChunks, as_i64)
from .parts import numbering, parts_of
from .points import CollectiveWaits, SyncPoints, sync_points


def points_and_chunks(ctx) -> SyncPoints:
    """sync_points(ctx), with the time chunks built at the same time on a thread
    of their own when the analysis runs on several: every root cause reads both
    first, the points in numpy, the chunks in C (without the GIL), so that the
    chunks cost no time on the way to the first interval (the delays and the
    critical path start together: neither finds a thread spare then, yet the
    one that waits for the points frees its own).  A trace analysed in parts
    finds its points with the other parts, one step after another."""
    if ctx.threads < 2 or parts_of(ctx) is not None:
        return sync_points(ctx)
    # the chunks take the threads spare beside the one finding the points
    threads = max(1, ctx.kernel_threads() - 1)
    with beside(lambda: time_chunks(ctx, threads)):
        return sync_points(ctx)


def time_chunks(ctx, threads: Optional[int] = None) -> TimeChunks:
    """Exclusive time as Scalasca's replay counts it, in chunks at ENTER and LEAVE
    events: the time since the location's previous ENTER or LEAVE, charged at an
    ENTER to the caller and at a LEAVE to the region left.  The C core builds
    those of the events (a compact table, location by location); the thread
    management's corrections come as a table of extra chunks, sorted by key = 2 *
    (location * (n+1) + event) + 1 for time counted after a point at that event (at
    a LEAVE), + 0 before it (at an ENTER or a team's join).  Built once per
    analysis (the delays and the critical path both read them), on `threads`
    threads (default: those no other property uses at the moment; the same
    table on any)."""
    return ctx.memo("rc_chunks", lambda: _build_chunks(ctx, threads))


def _build_chunks(ctx, threads: Optional[int]) -> TimeChunks:
    ev = ctx.events
    num = numbering(ctx)
    kinds = ctx.kinds
    roles = np.zeros(256, dtype=np.uint8)
    roles[[kinds["ENTER"]]] = _core.RC_CHUNK_ENTER
    roles[[kinds["LEAVE"]]] = _core.RC_CHUNK_LEAVE
    # a team's join closes a stretch of the master's time (Scalasca's checkpoint)
    roles[[kinds["THREAD_JOIN"], kinds["OMP_JOIN"]]] = _core.RC_CHUNK_JOIN
    # PROGRAM_BEGIN and PROGRAM_END open and close the program's call path
    if num.program >= 0:
        roles[[kinds["PROGRAM_BEGIN"]]] = _core.RC_CHUNK_ENTER
        roles[[kinds["PROGRAM_END"]]] = _core.RC_CHUNK_PROGRAM_END
    events = EventChunks.build(EventColumns(
        n_locations=ctx.n_locations, location=ev.location, kind=ev.kind, time=ev.time,
        cnode=np.ascontiguousarray(num.cnode, dtype=np.int32),
        parent=np.ascontiguousarray(num.parent, dtype=np.int32), role=roles.tobytes(),
        program_cnode=num.program),
        threads=threads if threads is not None else ctx.kernel_threads())
    n = np.int64(ctx.n_events + 1)
    chunks = TimeChunks(stride=int(n), n_cnodes=num.n + 1, events=events,
                        table=None)
    # thread management counts in the parallel region, as in the call tree: on
    # every thread the fork part after its ENTER; on the master it leaves the
    # forking call path (before the ENTER), and so does the join part
    enters, fork_part, join_part = ctx.thread_management()
    if not len(enters):
        empty = np.empty(0, np.int64)
        chunks.table = ChunkTable(empty, empty, empty)
        return chunks
    c_all = num.cnode[enters].astype(np.int64)
    loc_all = ctx.events.location[enters].astype(np.int64)
    ok_all = c_all >= 0
    master = ok_all & (ctx.events.location[ctx.enter_of(enters)] == loc_all)
    master &= num.parent[np.maximum(c_all, 0)] >= 0
    e, c, mloc = enters[master], c_all[master], loc_all[master]
    pc = num.parent[c].astype(np.int64)
    leave = ctx.leave_of(e)
    f, j = fork_part[master], join_part[master]
    has = leave >= 0
    ea, ca, la = enters[ok_all], c_all[ok_all], loc_all[ok_all]
    key = np.concatenate(((la * n + ea) * 2 + 1, (mloc * n + e) * 2,
                          ((mloc * n + leave) * 2 + 1)[has], ((mloc * n + leave) * 2 + 1)[has]))
    cnode = np.concatenate((ca, pc, c[has], pc[has]))
    ticks = np.concatenate((fork_part[ok_all], -f, j[has], -j[has]))
    order = np.argsort(key, kind="stable")
    chunks.table = ChunkTable(key[order], cnode[order], ticks[order])
    return chunks


def chunk_sums(ctx, spans: Spans) -> CallPathMap:
    """Raw exclusive time (float ticks) per span and call path (after its start
    event's point, before its end event's), as Scalasca's replay counts it."""
    return CallPathMap.from_core(_core.rc_chunk_sums(time_chunks(ctx), spans))


@dataclass
class Intervals:
    """Synchronisation intervals of a list of queries: their time map (`time`),
    the waiting time at the synchronisation points in between per query
    (`wait_sum`), and those points with waiting time (`between_query`,
    `between_row`: rows of the synchronisation points, in event order)."""
    time: Optional[CallPathMap]
    wait_sum: np.ndarray
    between_offset: np.ndarray
    between_row: np.ndarray

    @property
    def between_query(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.between_offset) - 1, dtype=np.int64),
                         np.diff(self.between_offset))


def points_by_location(ctx) -> PointsByLocation:
    """The synchronisation points as the C core reads them: their keys
    (location, event) ascending with their rows in sync_points' table, whose
    columns the C core reads at those rows (a copy of the columns in key order
    would hold 24 more bytes per point through the root causes' peak)."""
    def compute():
        p = sync_points(ctx).points
        n = np.int64(ctx.n_events + 1)
        # the points are sorted by event: a stable sort by location finishes the
        # job, and numpy sorts 16-bit keys stably by radix
        loc = p.location.astype(np.uint16) if ctx.n_locations < 1 << 16 else p.location
        order = np.argsort(loc, kind="stable")
        key = p.location[order] * n
        key += p.event[order]
        return PointsByLocation(key=key, row=order, cnode=p.cnode, wait=p.wait, cut=p.cut)
    return ctx.memo("rc_points_by_location", compute)


def interval_times(ctx, loc, prev, at) -> Intervals:
    """Per query (location, previous synchronisation point or -1, synchronisation
    point): Scalasca's pruned time map of the interval (positive times only), and
    the waiting time at the synchronisation points strictly in between.  On the
    threads no other property uses at the moment (the same maps on any)."""
    r = _core.rc_interval_times(time_chunks(ctx), points_by_location(ctx),
                                Spans(location=loc, start=prev, end=at),
                                threads=ctx.kernel_threads())
    return Intervals(CallPathMap.from_core(r["time"]), np.frombuffer(r["wait_sum"], np.float64),
                     np.frombuffer(r["between_offset"], np.int64),
                     np.frombuffer(r["between_row"], np.int64))


def excess(late: CallPathMap, late_q, early: CallPathMap, early_q, within=None, within_q=None):
    """Per pair k: the positive excess per call path of late's query late_q[k]
    over early's query early_q[k], restricted to the call paths of within's
    query within_q[k] when given: (map with one query per pair, sum per pair)."""
    r = _core.rc_excess(ExcessPairs(late=late, late_query=late_q, early=early,
                                    early_query=early_q, within=within,
                                    within_query=within_q if within is not None else None))
    return CallPathMap.from_core(r["excess"]), np.frombuffer(r["sum"], np.float64)


def pair_points(ctx) -> PairPoints:
    """The shared synchronisation points as the C core reads them: the pair keys,
    and per group point set its members and its points (CSR rows)."""
    def compute():
        sp = sync_points(ctx)
        members = [np.nonzero(g.members)[0] for g in sp.groups]
        keys = [g.keys for g in sp.groups]

        def csr(rows):
            offset = np.concatenate(([0], np.cumsum([len(x) for x in rows]))).astype(np.int64)
            return offset, (as_i64(np.concatenate(rows)) if rows else np.empty(0, np.int64))
        member_offset, member_location = csr(members)
        key_offset, group_key = csr(keys)
        return PairPoints(stride=ctx.n_events + 1, n_locations=ctx.n_locations + 1,
                          pair_key=sp.pair_keys, member_offset=member_offset,
                          member_location=member_location, key_offset=key_offset,
                          group_key=group_key)
    return ctx.memo("rc_pair_points", compute)


def previous_points(ctx, loc, partner, at) -> np.ndarray:
    """Per query: the last synchronisation point of loc with partner before event
    `at` (-1 when none)."""
    return np.frombuffer(_core.rc_previous_points(
        pair_points(ctx), MeetingQueries(location=loc, partner=partner, before=at)), np.int64)


@dataclass
class GroupStarts:
    """Where the delayer of each collective wait state instance last met its
    communicator (Scalasca's findPreviousMpiGroupSynchpoints)."""
    #: the first row of each instance among the collective waits, and the
    #: instance of each row
    first_row: np.ndarray
    instance_of_row: np.ndarray
    #: per instance: the point where the delayer last met every other member at
    #: once, or -1
    start: np.ndarray
    #: the members met one by one after that: (instance, member location, point)
    met_instance: np.ndarray
    met_location: np.ndarray
    met_event: np.ndarray


def group_interval_starts(ctx, cw: CollectiveWaits) -> GroupStarts:
    """Per collective wait instance: walking back from the delayer's point over
    its synchronisation points, the one where it last met every other member at
    once (or -1), and for members met one by one after that, the point where each
    was met last."""
    sp = sync_points(ctx)
    pkeys = sp.pair_keys
    point_key = points_by_location(ctx).key
    n = np.int64(ctx.n_events + 1)
    L = np.int64(ctx.n_locations + 1)
    # the partners of each point one by one (as (point key, partner) pairs), and
    # the set it meets as a group
    partner_key = as_i64((pkeys // n // L) * n + pkeys % n)
    partner_location = as_i64((pkeys // n) % L)
    point_set = np.full(len(point_key), -1, dtype=np.int64)
    sets = []
    for g in sp.groups:
        point_set[np.searchsorted(point_key, g.keys)] = len(sets)  # a later group wins
        sets.append(np.nonzero(g.members)[0])
    # the members of each instance's communicator
    _, first, inst_of_row = np.unique(cw.instance, return_index=True, return_inverse=True)
    comms = ctx.trace.communicators
    inst_comms, comm_of_inst = np.unique(cw.comm[first], return_inverse=True)
    member_set = len(sets) + comm_of_inst.astype(np.int64)  # one set per communicator
    for comm in inst_comms.tolist():
        cm = comms.get(int(comm))
        locs = np.asarray(cm.locations if cm is not None else [], dtype=np.int64)
        sets.append(locs[locs >= 0])
    sizes = np.asarray([len(x) for x in sets], dtype=np.int64)
    set_offset = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    set_location = as_i64(np.concatenate(sets)) if sets else np.empty(0, np.int64)
    r = _core.rc_group_starts(
        Meetings(stride=int(n), n_locations=int(L), point_key=point_key, point_set=point_set,
                 partner_key=partner_key, partner_location=partner_location,
                 set_offset=set_offset, set_location=set_location),
        GroupQueries(delayer_location=cw.delayer_location[first],
                     delayer_event=cw.delayer[first], member_set=member_set))
    start, m_inst, m_loc, m_ev = (np.frombuffer(r[k], np.int64) for k in
                                  ("start", "met_instance", "met_location", "met_event"))
    return GroupStarts(first, inst_of_row.astype(np.int64, copy=False), start, m_inst, m_loc,
                       m_ev)
