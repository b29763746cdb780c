"""Delay costs: the waiting time of each wait state charged to the call paths in
which the late location spent more time than the waiting one since their
previous synchronisation point (short-term), and, through the waits those
delays caused in turn, to their own causes (long-term, longterm.py); the
indirect and propagating waits; and the properties that publish them."""
from typing import Dict, Optional, Tuple

import numpy as np

from earlc.analysis import Property

from ..groups import group_max, group_min
from .arrays import gather_segments, segment_sums, sorted_search, to_ticks
from .intervals import (chunk_sums, excess, group_interval_starts, interval_times,
                        points_and_chunks, previous_points)
from .kinds import COLLECTIVE_KINDS, Cost, DelayKind
from .longterm import IdleCosts, MessageDelays, long_term_costs
from .parts import numbering, parts_of, prepare
from .points import READS, CollectiveWaits, MessageWaits, sync_points
from .records import CallPathMap, CollectiveInstances, Spans, as_i64


def message_delays(ctx, kind: DelayKind, waits: MessageWaits, parts=None):
    """Short-term delay costs of point-to-point wait states, per Scalasca's rule:
    (location, cnode, float ticks) of the delays on the late side; per wait
    state what the indirect, propagating and long-term costs need
    (MessageDelays); and the indirect part of each wait (location, cnode, float
    ticks on the waiting call).

    In parts (`parts`: this part, see parts.py) the late side's part computes
    the delays, with the waiting side's interval sent there; the MessageDelays
    are those of the wait states delayed here, the indirect rows those waited
    here (the late side's part sends them back)."""
    loc = ctx.events.location
    waiter_loc = loc[waits.waiter].astype(np.int64)
    delayer_loc = loc[waits.delayer].astype(np.int64)
    if parts is None:
        mine_w = mine_d = slice(None)
    else:
        mine_w = np.nonzero(parts.own[waiter_loc])[0]
        mine_d = np.nonzero(parts.own[delayer_loc])[0]
    w_loc, d_loc, w_at = waiter_loc[mine_w], delayer_loc[mine_w], waits.waiter[mine_w]
    early = interval_times(ctx, w_loc, previous_points(ctx, w_loc, d_loc, w_at), w_at).time
    del w_loc, d_loc, w_at
    if parts is not None:
        early = parts.to_late_side(waits.waiter, delayer_loc, mine_w, early, mine_d)
    waiter_at, delayer_at = waits.waiter[mine_d], waits.delayer[mine_d]
    waiter_loc_d, delayer_loc_d, wait = waiter_loc[mine_d], delayer_loc[mine_d], waits.wait[mine_d]
    late = interval_times(ctx, delayer_loc_d,
                          previous_points(ctx, delayer_loc_d, waiter_loc_d, delayer_at),
                          delayer_at)
    # the late side's excess per call path
    each = np.arange(len(wait), dtype=np.int64)
    delays, dsum = excess(late.time, each, early, each)
    del early
    # past the excess only the late side's points in between are read (the
    # long-term costs): its time map goes now, not with the rest of the delays
    late.time = None
    q, c, val = delays.columns()
    wsum = late.wait_sum
    denom = dsum + wsum
    scale = np.where(denom > 0, np.minimum(wait / np.where(denom > 0, denom, 1), 1.0), 0.0)
    # indirect: the part of each wait explained by waiting the late side did in
    # between, charged to the waiting call
    indirect = np.where(wsum > 0, scale * wsum, 0.0)
    if parts is not None:
        indirect = parts.to_waiting_side(waits.waiter, waiter_loc, mine_d, indirect, mine_w)
    num = numbering(ctx)
    indirect_rows = (waiter_loc[mine_w], num.cnode[waits.waiter[mine_w]], indirect)
    return (delayer_loc_d[q], c, val * scale[q]), MessageDelays(
        kind=kind, waiter=waiter_at, waiter_location=waiter_loc_d,
        delayer_location=delayer_loc_d, delayer=delayer_at, scale=scale, wait_sum=wsum,
        denominator=denom, delays=delays, late=late), indirect_rows


def _collective_delays(ctx, parts=None):
    """Short-term delay costs of the collective wait states, per kind: (location,
    cnode, float ticks) on the delaying member (Scalasca's collective delay); and
    what their long-term costs need, the C replay's collective instances (None
    without collective wait states): per instance its kind, delayer and members
    (CSR), per member its event, waiting time, delays (a query of one call-path
    map) and their sum.  In parts (`parts`: this part) those of the instances
    its own locations delay, with the intervals of the waiters elsewhere sent
    here by their parts."""
    sp = sync_points(ctx)
    p, cw = sp.points, sp.collective_waits
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    # each waiter's own interval since it last met the delayer
    waiter = np.nonzero(cw.event != cw.delayer)[0]
    if parts is not None:
        mine_w = waiter[parts.own[cw.location[waiter]]]
    else:
        mine_w = waiter
    w_loc, w_dloc, w_ev = cw.location[mine_w], cw.delayer_location[mine_w], cw.event[mine_w]
    w_time = interval_times(ctx, w_loc, previous_points(ctx, w_loc, w_dloc, w_ev), w_ev).time
    if parts is not None:
        # the instances delayed here, with the intervals of their waiters
        here = parts.own[cw.delayer_location]
        rows = np.nonzero(here)[0]
        w_time = parts.to_late_side(cw.event, cw.delayer_location, mine_w, w_time,
                                    rows[cw.event[rows] != cw.delayer[rows]])
        cw = CollectiveWaits(**{f: getattr(cw, f)[here] for f in (
            "event", "location", "delayer", "delayer_location", "kind", "instance", "comm")})
        waiter = np.nonzero(cw.event != cw.delayer)[0]
    if not len(cw.event):
        return {k: empty for k in COLLECTIVE_KINDS}, None
    gs = group_interval_starts(ctx, cw)
    first, inst_of_row, starts = gs.first_row, gs.instance_of_row, gs.start
    t_inst, t_loc, t_ev = gs.met_instance, gs.met_location, gs.met_event
    del gs
    ninst = len(first)
    d_loc_i = cw.delayer_location[first]
    d_ev_i = cw.delayer[first]
    # queries: one per instance, one per member met one by one, one per waiter
    # (those w_time holds)
    w_loc, w_ev = cw.location[waiter], cw.event[waiter]
    w_dloc = cw.delayer_location[waiter]
    iv = interval_times(ctx, np.concatenate((d_loc_i, d_loc_i[t_inst])),
                        np.concatenate((starts, t_ev)),
                        np.concatenate((d_ev_i, d_ev_i[t_inst])))
    times = iv.time.followed_by(w_time)
    del w_time
    wsum = iv.wait_sum
    # each waiter's source: its own meeting with the delayer since the group point,
    # else the group interval
    w_inst = inst_of_row[waiter]
    src = w_inst.copy()
    if len(t_inst):
        tkey = t_inst * (ctx.n_locations + 1) + t_loc
        torder = np.argsort(tkey)
        wkey = w_inst * (ctx.n_locations + 1) + w_loc
        pos = np.searchsorted(tkey[torder], wkey)
        hit = (pos < len(tkey)) & (tkey[torder][np.minimum(pos, len(tkey) - 1)] == wkey)
        src[hit] = ninst + torder[pos[hit]]
    local = ninst + len(t_inst) + np.arange(len(waiter))
    # the source's excess over the waiter's own interval, in the call paths of the
    # group interval (which restricts every source)
    delays, dsum = excess(times, src, times, local, within=times, within_q=w_inst)
    del local, times
    wk, c, val = delays.columns()
    prop = wsum[src]
    wait = p.wait[np.searchsorted(p.event, w_ev)]
    denom = dsum + prop
    scale = np.where(denom > 0, wait / np.where(denom > 0, denom, 1), 0.0)
    kind = cw.kind[waiter]
    out = {}
    for kd in COLLECTIVE_KINDS:
        sel = kind[wk] == kd
        out[kd] = (w_dloc[wk[sel]], c[sel], val[sel] * scale[wk[sel]])
    del kind, wk, c, val, sel
    # what the long-term costs need, per instance: its members (the delayer first,
    # with the group interval's times as its delays, then the waiters in order), the
    # waiting points in the delayer's interval, and where members were met alone
    roots = np.arange(ninst, dtype=np.int64)
    m_inst = np.concatenate((roots, w_inst))
    m_waiter = np.concatenate((np.full(ninst, -1, np.int64), np.arange(len(waiter))))
    order = np.argsort(m_inst, kind="stable")  # the roots come first in each instance
    m_inst, m_waiter = m_inst[order], m_waiter[order]
    is_root = m_waiter < 0
    j = np.maximum(m_waiter, 0)
    met = np.full(len(waiter), -1, dtype=np.int64)
    if len(t_inst):
        met[hit] = t_ev[torder[pos[hit]]]
    group_time = iv.time
    # the members' delays: the group intervals (the first ninst queries; the
    # others are not needed past the excess), then the waiters' excess
    root_end = group_time.offset[ninst]
    member_delays = CallPathMap(group_time.offset[:ninst + 1], group_time.cnode[:root_end],
                                group_time.value[:root_end]).followed_by(delays)
    member_delay_query = np.where(is_root, m_inst, ninst + j)
    # the delayer's delays in total, added as numpy.sum adds them
    root_sum = segment_sums(group_time.value, group_time.offset[:ninst + 1])
    # the interval times are copied or summed by now: let their buffer go
    del group_time, delays
    iv.time = None
    # the delayer's waiting points in between; its OpenMP barrier waits take a
    # collective's cost only when its interval starts at a collective (or at the
    # start of the trace), not at a message's synchronisation point: so Scalasca's
    # long-term costs come out
    b_end = iv.between_offset[ninst]
    between_offset, between_row = iv.between_offset[:ninst + 1], iv.between_row[:b_end]
    if len(sp.omp_keys):
        is_omp = np.zeros(len(p.event), dtype=bool)
        omp_rows = p.rows_of(sp.omp_keys % np.int64(ctx.n_events + 1))
        is_omp[omp_rows[omp_rows >= 0]] = True
        ls, lr = sp.late_sender, sp.late_receiver
        message_points = np.sort(np.concatenate((ls.waiter, ls.delayer, lr.waiter, lr.delayer)))
        at = np.minimum(np.searchsorted(message_points, starts), max(len(message_points) - 1, 0))
        at_message = (message_points[at] == starts) if len(message_points) else np.zeros(
            len(starts), dtype=bool)
        keep_omp = (starts < 0) | ~at_message
        b_inst = iv.between_query[:b_end]
        keep = keep_omp[b_inst] | ~is_omp[between_row]
        between_offset = np.concatenate(([0], np.cumsum(np.bincount(b_inst[keep],
                                                                    minlength=ninst))))
        between_row = between_row[keep]
    member_event = np.where(is_root, d_ev_i[m_inst], w_ev[j])
    instances = CollectiveInstances(
        kind=cw.kind[first], delayer_location=d_loc_i, delayer_event=d_ev_i,
        member_offset=np.searchsorted(m_inst, np.arange(ninst + 1)),
        between_offset=between_offset, between_row=between_row, member_event=member_event,
        member_row=p.rows_of(as_i64(member_event)), member_wait=np.where(is_root, 0.0, wait[j]),
        member_delay_sum=np.where(is_root, root_sum[m_inst], dsum[j]),
        member_prop=np.where(is_root, wsum[m_inst], prop[j]),
        member_met=np.where(is_root, -1, met[j]), member_delay_query=member_delay_query,
        delays=member_delays)
    return out, instances


def _omp_barrier_delays(ctx):
    """Short-term delay costs of OpenMP barrier waits (Scalasca's OpenMP barrier
    delay): each waiting thread's interval since its previous OpenMP point against
    the last thread's, charged to the last thread: (location, cnode, float ticks);
    and per barrier instance what its long-term costs need, in the form of the MPI
    collectives' instances: every thread as a member (the last one with no delays
    of its own), and the waiting points in the last thread's interval."""
    sp = sync_points(ctx)
    omp_keys = sp.omp_keys
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    if not len(omp_keys):
        return empty, None
    b = ctx.published["omp_barriers"]
    if not len(b):
        return empty, None
    n = np.int64(ctx.n_events + 1)
    inst, leave, t = b["instance"], b["leave"], b["enter_time"]
    loc = ctx.events.location[leave].astype(np.int64)
    i = sorted_search(omp_keys, loc * n + leave) - 1
    prev = np.where((i >= 0) & (omp_keys[np.maximum(i, 0)] >= loc * n),
                    omp_keys[np.maximum(i, 0)] - loc * n, -1)
    iv = interval_times(ctx, loc, prev, leave)
    # the last thread to arrive (lowest location among equal times)
    big = np.iinfo(np.int64).max
    latest_t = group_max(inst, t)
    nrows = np.int64(len(t) + 1)
    last = group_min(inst, np.where(t == latest_t, loc * nrows + np.arange(len(t)), big)) % nrows
    wait = (latest_t - t).astype(np.float64)
    delays, dsum = excess(iv.time, last, iv.time, np.arange(len(t)))
    wk, c, val = delays.columns()
    denom = dsum + iv.wait_sum[last]
    scale = np.where(denom > 0, wait / np.where(denom > 0, denom, 1), 0.0)
    short_term = (loc[last[wk]], c, val * scale[wk])
    # per barrier instance, in the form of the MPI collectives' instances: every
    # thread a member (its delays the excess of the last thread over it; the last
    # one has none), the last thread the delayer, its waiting points in between
    # (one location's, in event order); OpenMP threads all meet at every barrier,
    # nobody is met alone
    i_start = np.concatenate(([0], np.nonzero(np.diff(inst))[0] + 1))
    j_last = last[i_start]
    b_offset, (b_row,) = gather_segments(iv.between_offset, j_last, iv.between_row)
    instances = CollectiveInstances(
        kind=np.full(len(i_start), int(DelayKind.OMP_BARRIER), dtype=np.int64),
        delayer_location=loc[j_last], delayer_event=leave[j_last], member_offset=np.concatenate((i_start, [len(inst)])),
        between_offset=b_offset, between_row=b_row, member_event=leave,
        member_row=sp.points.rows_of(as_i64(leave)), member_wait=wait, member_delay_sum=dsum,
        member_prop=iv.wait_sum[last], member_met=np.full(len(t), -1, dtype=np.int64),
        member_delay_query=np.arange(len(t), dtype=np.int64), delays=delays)
    return short_term, instances


def _omp_idle_delays(ctx):
    """Short-term delay costs of idle worker threads (Scalasca's OpenMP idleness
    delay): the master's time outside parallel regions, from a team's join to the
    next fork (or the end), per call path without the waiting time at the points in
    between, times the number of worker threads left idle: (location, cnode, float
    ticks) on the master; and the long-term cost this puts on the waits in between
    (IdleCosts): the workers idle while the master waits too, so each such wait
    costs its waiting time times the idle workers."""
    omp_keys = sync_points(ctx).omp_keys
    e = np.empty(0, np.int64)
    empty = ((e, e, np.empty(0)), IdleCosts(e, np.empty(0)))
    if not len(omp_keys):
        return empty
    enters = ctx.thread_management()[0]
    ev = ctx.events
    loc_of = ev.location
    masters = enters[loc_of[ctx.enter_of(enters)] == loc_of[enters]]
    if not len(masters):
        return empty
    n = np.int64(ctx.n_events + 1)
    locs = ctx.trace.locations
    threads = {}
    for l in locs:
        if l.type == "CPU_THREAD":
            threads[l.rank] = threads.get(l.rank, 0) + 1
    mloc_all = np.unique(loc_of[masters].astype(np.int64))
    # the forks of each master, and the end of its trace
    at = np.concatenate((masters, ev.loc_start[mloc_all + 1].astype(np.int64) * 0 + ctx.n_events))
    loc = np.concatenate((loc_of[masters].astype(np.int64), mloc_all))
    i = sorted_search(omp_keys, loc * n + at) - 1
    prev = np.where((i >= 0) & (omp_keys[np.maximum(i, 0)] >= loc * n),
                    omp_keys[np.maximum(i, 0)] - loc * n, -1)
    # the first join after the previous point (or the location's start)
    jn = ctx.events_of_kind("THREAD_JOIN", "OMP_JOIN")
    jkey = np.sort(loc_of[jn].astype(np.int64) * n + jn)
    j = sorted_search(jkey, loc * n + prev)
    ok = (j < len(jkey)) & (jkey[np.minimum(j, len(jkey) - 1)] < loc * n + at)
    start = np.where((prev >= 0) & ok, jkey[np.minimum(j, len(jkey) - 1)] - loc * n, -1)
    start = np.where(prev >= 0, start, -1)
    q, c, v = chunk_sums(ctx, Spans(location=loc, start=start, end=at)).columns()
    # waiting time at every point between the previous OpenMP point and the fork
    iv = interval_times(ctx, loc, prev, at)
    wsum, bq, brow = iv.wait_sum, iv.between_query, iv.between_row
    p = sync_points(ctx).points
    NC = np.int64(numbering(ctx).n + 1)
    allk = np.concatenate((q * NC + c, bq * NC + p.cnode[brow]))
    allv = np.concatenate((v, -p.wait[brow]))
    uk, inv = np.unique(allk, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, allv)
    in_t = np.zeros(len(uk), dtype=bool)
    in_t[np.searchsorted(uk, q * NC + c)] = True
    keep = in_t & (val > 0)
    uk, val = uk[keep], val[keep]
    qq, cc = uk // NC, uk % NC
    dsum = np.bincount(qq, weights=val, minlength=len(at))
    workers = np.asarray([max(threads.get(locs[int(l)].rank, 1) - 1, 0) for l in loc.tolist()],
                         dtype=np.float64)
    scale = np.where(dsum + wsum > 0, workers, 0.0)
    # long-term: the workers also idle while the master waits in between, so each
    # such wait carries the idle workers as its cost (Scalasca's idleness scale)
    hit = scale[bq] > 0
    return ((loc[qq], cc, val * scale[qq]),
            IdleCosts(brow[hit], scale[bq[hit]] * p.wait[brow[hit]]))


#: what a property reads of delay_costs: the rows of one part of one kind
CostKey = Tuple[Cost, DelayKind]


def _warn_out_of_order(ctx, n: int) -> None:
    ctx.warn("rootcause_cycle",
             "%s: %d wait state%s of the long-term delay costs depend on each other in a "
             "circle (messages received before they were sent: a violated clock condition), "
             "so their costs were passed on before all of them had arrived; the long-term "
             "delay costs may be too low" % (ctx.trace.path, n, "" if n == 1 else "s"))


def delay_costs(ctx) -> Dict[CostKey, tuple]:
    """Every part of the delay costs of every kind of wait state, as (call path,
    location, ticks) rows per (Cost, DelayKind), computed together so that the
    inputs of the time chunks and the intervals are gathered once.  For a part
    of a trace analysed in parts, those of its own locations, found with the
    other parts (parts.py)."""
    def compute():
        parts = parts_of(ctx)
        if parts is None:
            return _whole_delay_costs(ctx)
        return parts.run(lambda: _delay_costs(ctx, prepare(ctx)))
    return ctx.memo("delay_costs", compute)


#: the short-term costs of each family of wait states (_family_of): the
#: collectives' (MPI collectives and OpenMP) and the messages'
_COLLECTIVES, _MESSAGES = "collectives", "messages"


def _family_of(kind: DelayKind) -> str:
    return _MESSAGES if kind in (DelayKind.LATE_SENDER, DelayKind.LATE_RECEIVER) else \
        _COLLECTIVES


def short_term_costs(ctx, family: str) -> dict:
    """The short-term (and indirect) costs of one family of wait states, as
    delay_costs gives them, and what its long-term costs need ("pending").  On
    a whole trace the two families are computed apart, each by the first
    property that asks: on several threads the collectives' and the messages'
    run side by side (they share only the points and the chunks), and their
    short-term properties need not wait for the long-term replay."""
    step = _collective_costs if family == _COLLECTIVES else _message_costs
    return ctx.memo(("rc_short_term", family), lambda: step(ctx, None))


def _whole_delay_costs(ctx) -> Dict[CostKey, tuple]:
    """delay_costs of a whole trace: both families' short-term costs (computed
    apart, short_term_costs), then the long-term replay over both."""
    collectives = short_term_costs(ctx, _COLLECTIVES)
    messages = short_term_costs(ctx, _MESSAGES)
    out = _long_term(ctx, None, collectives, messages)
    # what only the replay reads goes with it (after it: a failed replay is
    # tried again by the next property that asks); the memos keep the rows
    del collectives["pending"], messages["pending"]
    return out


def _delay_costs(ctx, parts) -> Dict[CostKey, tuple]:
    """delay_costs, one step after another (as every part of a trace analysed in
    parts takes them: another part may need each)."""
    return _long_term(ctx, parts, _collective_costs(ctx, parts), _message_costs(ctx, parts))


def _short_term_rows(ctx, out, kind, rows) -> None:
    # rounded at once: the float rows go before the next kind's are made
    out[Cost.SHORT_TERM, kind] = to_ticks(ctx.n_locations, *rows)


def _collective_costs(ctx, parts) -> dict:
    """The short-term costs of the OpenMP and MPI collective wait states ("rows"),
    and what their long-term costs need ("pending": the OpenMP and MPI
    collective instances, the idle workers' costs)."""
    sp = points_and_chunks(ctx)
    out: Dict[CostKey, tuple] = {}
    coll_instances: Optional[CollectiveInstances] = None
    omp_instances: Optional[CollectiveInstances] = None
    idle_costs: Optional[IdleCosts] = None
    if len(sp.omp_keys):  # a process's threads are all in one part
        rows, omp_instances = _omp_barrier_delays(ctx)
        _short_term_rows(ctx, out, DelayKind.OMP_BARRIER, rows)
        rows, idle_costs = _omp_idle_delays(ctx)
        _short_term_rows(ctx, out, DelayKind.OMP_IDLE, rows)
    # in parts every part takes every step: another part may need this one's
    if parts is not None or len(sp.collective_waits.event):
        coll_short, coll_instances = _collective_delays(ctx, parts)
        for kind, rows in coll_short.items():
            _short_term_rows(ctx, out, kind, rows)
        del coll_short
    collectives = [c for c in (coll_instances, omp_instances) if c is not None]
    return {"rows": out, "pending": (collectives, idle_costs)}


def _message_costs(ctx, parts) -> dict:
    """The short-term and indirect costs of the Late Sender and Late Receiver
    wait states ("rows"), and what their long-term and propagating costs need
    ("pending": their MessageDelays, and the propagating candidates)."""
    sp = points_and_chunks(ctx)
    out: Dict[CostKey, tuple] = {}
    p = sp.points
    prop_rows, prop_vals = [], []
    messages = []
    for kind, waits in ((DelayKind.LATE_SENDER, sp.late_sender),
                        (DelayKind.LATE_RECEIVER, sp.late_receiver)):
        if parts is None and not len(waits.waiter):
            continue
        rows, d, indirect = message_delays(ctx, kind, waits, parts)
        _short_term_rows(ctx, out, kind, rows)
        del rows
        messages.append(d)
        out[Cost.INDIRECT, kind] = to_ticks(ctx.n_locations, *indirect)
        # propagating: those waits in between, each as much as any later wait
        # state it caused needs of it
        bq, brow = d.late.between_query, d.late.between_row
        use = (d.scale[bq] > 0) & (d.wait_sum[bq] > 0)
        prop_rows.append(brow[use])
        prop_vals.append(d.scale[bq[use]] * p.wait[brow[use]])
    return {"rows": out, "pending": (messages, prop_rows, prop_vals)}


def _long_term(ctx, parts, collective: dict, message: dict) -> Dict[CostKey, tuple]:
    """Both families' rows (_collective_costs, _message_costs), with the long-term
    costs (the backward replay over every wait state) and the propagating ones."""
    p = sync_points(ctx).points
    # the points as the interval queries read them served the short-term steps:
    # the replay and the critical path read neither (a later interval query
    # sorts them again)
    ctx.forget("rc_points_by_location", "rc_pair_points")
    collectives, idle_costs = collective["pending"]
    messages, prop_rows, prop_vals = message["pending"]
    out: Dict[CostKey, tuple] = {**collective["rows"], **message["rows"]}
    long_term, out_of_order = long_term_costs(ctx, p, messages, collectives, idle_costs, parts)
    del messages, collectives, idle_costs
    for kind, rows in long_term.items():
        out[Cost.LONG_TERM, kind] = to_ticks(ctx.n_locations, *rows)
    del long_term
    if out_of_order:
        _warn_out_of_order(ctx, out_of_order)
    if prop_rows:
        rows = np.concatenate(prop_rows)
        best = np.zeros(len(p.event))
        np.maximum.at(best, rows, np.concatenate(prop_vals))
        hit = np.nonzero(best > 0)[0]
        k = ctx.events.kind[p.event[hit]]
        kinds = ctx.kinds
        for kind, sel in (
                (DelayKind.LATE_SENDER, (k == kinds["MPI_RECV"]) | (k == kinds["MPI_IRECV"])),
                (DelayKind.LATE_RECEIVER, (k == kinds["MPI_SEND"]) |
                 (k == kinds["MPI_ISEND_COMPLETE"]))):
            r = hit[sel]
            out[Cost.PROPAGATING, kind] = to_ticks(ctx.n_locations, p.location[r],
                                                   p.cnode[r], best[r])
    return out


#: how long-term costs cross OpenMP barriers, for the descriptions of the long-term metrics
_THROUGH_OMP_BARRIERS = (
    " On hybrid traces the cost also crosses OpenMP barriers: a cost on the master's wait "
    "at a barrier goes to the thread that was last there, in proportion to its excess time "
    "over the master.")
_OMP_CROSSING_RULE = (
    " As in Scalasca, an MPI collective passes its cost on to the barrier waits of the "
    "delaying master only when its interval there begins at another collective (or "
    "MPI_Init), not at a point-to-point synchronisation point.")


class _Delay(Property):
    measures = "cause"
    unit, group, reads = "sec", "root_cause", READS
    across_parts = True
    #: the kind of wait state, and the part of its costs, the property publishes
    kind, cost = DelayKind.LATE_SENDER, Cost.SHORT_TERM

    def totals(self, ctx):
        e = np.empty(0, np.int64)
        # the costs first: in parts their first step makes the numbering too
        # (parts.prepare), with the point-to-point wait states
        if self.cost in (Cost.SHORT_TERM, Cost.INDIRECT) and parts_of(ctx) is None:
            # without waiting for the long-term replay (nor the other family)
            costs = short_term_costs(ctx, _family_of(self.kind))["rows"]
        else:
            costs = delay_costs(ctx)
        rows = costs.get((self.cost, self.kind), (e, e, e))
        return numbering(ctx).local_rows(rows)


class DelayLateSender(_Delay):
    name, title = "delay_latesender", "Late Sender delay costs (short-term)"
    cube_id = "delay_latesender"
    explains = "late_sender"
    description = ("The call paths that made senders late, and by how much: for each Late "
                   "Sender, the sender's excess time per call path over the receiver's since "
                   "their previous synchronisation point, scaled to the waiting time it caused "
                   "(Scalasca's short-term delay costs). Charged to the sender's call paths.")
    diagnosis = ("Shift work in these call paths from the delaying processes to the waiting "
                 "ones, or reduce it.")


class DelayLateReceiver(_Delay):
    name, title = "delay_latereceiver", "Late Receiver delay costs (short-term)"
    kind = DelayKind.LATE_RECEIVER
    cube_id = "delay_latereceiver"
    explains = "late_receiver"
    description = ("The call paths that made receivers late: for each Late Receiver, the "
                   "receiver's excess time per call path over the sender's since their previous "
                   "synchronisation point, scaled to the waiting time it caused. Charged to the "
                   "receiver's call paths.")
    diagnosis = "Post the receives earlier, or move work out of these call paths."


class DelayBarrier(_Delay):
    name, title = "delay_barrier", "Barrier delay costs (short-term)"
    kind = DelayKind.BARRIER
    cube_id = "delay_barrier"
    explains = "wait_at_barrier"
    description = ("The call paths that made the last process late at an MPI_Barrier: per "
                   "waiting process, the last one's excess time per call path since they last "
                   "all met, scaled to that process's waiting time. Charged to the last one.")
    diagnosis = "Balance the work in these call paths before the barrier."


class DelayNxN(_Delay):
    name, title = "delay_n2n", "N x N delay costs (short-term)"
    kind = DelayKind.NXN
    cube_id = "delay_n2n"
    explains = "wait_at_nxn"
    description = ("The call paths that made the latest member late at an N x N collective "
                   "(Allreduce, Allgather, Alltoall, Reduce_scatter): its excess time per call "
                   "path over each waiting member since they last met, scaled to the waiting "
                   "time. Charged to the latest member.")
    diagnosis = "Balance the work in these call paths before the collective."


class Delay12N(_Delay):
    name, title = "delay_12n", "1-to-N delay costs (short-term)"
    kind = DelayKind.ONE_TO_N
    cube_id = "delay_12n"
    explains = "late_broadcast"
    description = ("The call paths that made the root of a broadcast or scatter late: its "
                   "excess time per call path over each waiting receiver since they last met, "
                   "scaled to the waiting time. Charged to the root.")
    diagnosis = "Reduce the root's work before the broadcast, or give it to others."


class DelayN21(_Delay):
    name, title = "delay_n21", "N-to-1 delay costs (short-term)"
    kind = DelayKind.N_TO_ONE
    cube_id = "delay_n21"
    explains = "early_reduce"
    description = ("The call paths that made the latest sender of a reduction or gather late "
                   "for its root: its excess time per call path since they last met, scaled to "
                   "the root's waiting time. Charged to the latest sender.")
    diagnosis = "Balance the senders' work before the reduction."


class DelayOmpBarrier(_Delay):
    name, title = "delay_ompbarrier", "OpenMP barrier delay costs (short-term)"
    kind = DelayKind.OMP_BARRIER
    cube_id = "delay_ompbarrier"
    explains = "omp_barrier_wait_implicit"
    description = ("The call paths that made the last thread late at an OpenMP barrier: its "
                   "excess time per call path over each waiting thread since their previous "
                   "OpenMP synchronisation point (the fork or the previous barrier), scaled to "
                   "that thread's waiting time. Charged to the last thread.")
    diagnosis = "Balance the loop iterations or tasks of these call paths across the threads."


class DelayOmpIdle(_Delay):
    name, title = "delay_ompidle", "OpenMP idleness delay costs (short-term)"
    kind = DelayKind.OMP_IDLE
    cube_id = "delay_ompidle"
    explains = "idle_threads"
    description = ("The master's call paths outside parallel regions that leave worker "
                   "threads idle: its time from a team's join to the next fork (without "
                   "waiting at synchronisation points), times the number of idle workers.")
    diagnosis = "Parallelise these call paths, or run fewer threads per process."


class DelayOmpBarrierLongTerm(_Delay):
    name, title = "delay_ompbarrier_longterm", "OpenMP barrier delay costs (long-term)"
    kind, cost = DelayKind.OMP_BARRIER, Cost.LONG_TERM
    cube_id = "delay_ompbarrier_longterm"
    explains = "omp_barrier_wait_implicit"
    description = ("The call paths whose delays cause OpenMP barrier waits indirectly: the "
                   "waiting time at a barrier is a cost on the waits of the last thread since "
                   "its previous OpenMP point (MPI waits of the master inside the parallel "
                   "region), passed on to the processes that delayed those, and from their "
                   "waits on in turn. As in Scalasca, the cost stops at OpenMP barriers: only "
                   "a barrier's own waiting time enters there.")
    diagnosis = ("Delays with far-reaching effects: the threads wait at the barrier for "
                 "communication that other processes delayed. Fix those delays first.")


class DelayOmpIdleLongTerm(_Delay):
    name, title = "delay_ompidle_longterm", "OpenMP idleness delay costs (long-term)"
    kind, cost = DelayKind.OMP_IDLE, Cost.LONG_TERM
    cube_id = "delay_ompidle_longterm"
    explains = "idle_threads"
    description = ("The call paths whose delays leave worker threads idle indirectly: while "
                   "the master waits outside parallel regions (in MPI, between a team's join "
                   "and the next fork), its workers idle too, so each such wait costs its "
                   "waiting time times the idle workers. That cost goes to the delays that "
                   "caused the wait on other processes, on through the waits in their "
                   "intervals, and at OpenMP barriers on a master to the thread that was last "
                   "there, in proportion to its excess time over the master." +
                   _OMP_CROSSING_RULE)
    diagnosis = ("Balance the MPI processes: their imbalance keeps the masters waiting and "
                 "their worker threads idle.")


class _DelayCollectiveLongTerm(_Delay):
    diagnosis = ("Delays with far-reaching effects: an imbalance here spreads through "
                 "collectives to other processes. Fix it, or decouple the processes.")


class DelayBarrierLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_barrier_longterm", "Barrier delay costs (long-term)"
    kind, cost = DelayKind.BARRIER, Cost.LONG_TERM
    cube_id, explains = "delay_barrier_longterm", "wait_at_barrier"
    description = ("The call paths whose delays cause waiting at MPI barriers indirectly." +
                   _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE)


class DelayNxNLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_n2n_longterm", "N x N delay costs (long-term)"
    kind, cost = DelayKind.NXN, Cost.LONG_TERM
    cube_id, explains = "delay_n2n_longterm", "wait_at_nxn"
    description = ("The call paths whose delays cause waiting at N x N collectives indirectly." +
                   _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE)


class Delay12NLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_12n_longterm", "1-to-N delay costs (long-term)"
    kind, cost = DelayKind.ONE_TO_N, Cost.LONG_TERM
    cube_id, explains = "delay_12n_longterm", "late_broadcast"
    description = ("The call paths whose delays cause waiting at broadcasts indirectly." +
                   _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE)


class DelayN21LongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_n21_longterm", "N-to-1 delay costs (long-term)"
    kind, cost = DelayKind.N_TO_ONE, Cost.LONG_TERM
    cube_id, explains = "delay_n21_longterm", "early_reduce"
    description = ("The call paths whose delays cause waiting at reductions indirectly." +
                   _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE)


class DelayLateSenderLongTerm(_Delay):
    name, title = "delay_latesender_longterm", "Late Sender delay costs (long-term)"
    kind, cost = DelayKind.LATE_SENDER, Cost.LONG_TERM
    cube_id = "delay_latesender_longterm"
    explains = "late_sender"
    description = ("The call paths whose delays cause Late Sender waits indirectly: waiting "
                   "time that propagated through other wait states (the indirect part of Late "
                   "Sender) traced back to the delays at its origin." + _THROUGH_OMP_BARRIERS)
    diagnosis = ("Delays with far-reaching effects: an imbalance here spreads along the "
                 "communication chain. Fix it, or decouple with non-blocking communication.")


class DelayLateReceiverLongTerm(_Delay):
    name, title = "delay_latereceiver_longterm", "Late Receiver delay costs (long-term)"
    kind, cost = DelayKind.LATE_RECEIVER, Cost.LONG_TERM
    cube_id = "delay_latereceiver_longterm"
    explains = "late_receiver"
    description = ("The call paths whose delays cause Late Receiver waits indirectly, through "
                   "other wait states." + _THROUGH_OMP_BARRIERS)
    diagnosis = "Delays with far-reaching effects: fix them, or post receives earlier."


class IndirectLateSender(_Delay):
    name, title, parent = "late_sender_indirect", "Indirect (propagated) Late Sender", "late_sender"
    kind, cost = DelayKind.LATE_SENDER, Cost.INDIRECT
    cube_id = "mpi_wait_indirect_latesender"
    description = ("The part of each Late Sender's waiting time that the sender itself spent "
                   "waiting since the two last met (wait states propagating to this one), "
                   "rather than in delays of its own. Charged to the waiting receive.")
    diagnosis = "Look for the root cause further back: where the sender itself waited."


class IndirectLateReceiver(_Delay):
    name, title, parent = ("late_receiver_indirect", "Indirect (propagated) Late Receiver",
                           "late_receiver")
    kind, cost = DelayKind.LATE_RECEIVER, Cost.INDIRECT
    cube_id = "mpi_wait_indirect_latereceiver"
    description = ("The part of each Late Receiver's waiting time that the receiver itself "
                   "spent waiting since the two last met. Charged to the waiting send.")
    diagnosis = "Look for the root cause further back: where the receiver itself waited."


class PropagatingLateSender(_Delay):
    name, title, parent = ("late_sender_propagating", "Propagating Late Sender",
                           "late_sender")
    kind, cost = DelayKind.LATE_SENDER, Cost.PROPAGATING
    cube_id = "mpi_wait_propagating_ls"
    description = ("Late Sender waiting time that propagates: the part of a Late Sender wait "
                   "on a location that later makes another location wait for it (the largest "
                   "such part over the wait states it causes).")
    diagnosis = "Removing these waits removes more waiting elsewhere: fix their causes first."


class PropagatingLateReceiver(_Delay):
    name, title, parent = ("late_receiver_propagating", "Propagating Late Receiver",
                           "late_receiver")
    kind, cost = DelayKind.LATE_RECEIVER, Cost.PROPAGATING
    cube_id = "mpi_wait_propagating_lr"
    description = ("Late Receiver waiting time that propagates: the part of a Late Receiver "
                   "wait that later makes another location wait for the sender.")
    diagnosis = "Removing these waits removes more waiting elsewhere: fix their causes first."
