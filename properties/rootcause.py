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
"""
import numpy as np

from earlc.analysis import Property
from earlc.analysis.severity import sum_by_key

from .groups import group_max, group_min
from .mpi_p2p import _request_half

_NONE = np.iinfo(np.int64).min


def _published(ctx, name):
    """The instances a property published, computed now if the analysis did not
    select it (root causes need every wait state)."""
    if name not in ctx.published:
        from earlc.analysis.engine import builtin_properties

        prop = next(p for p in builtin_properties() if p.name == name)
        sub = _published(ctx, prop.subscribes) if prop.subscribes else None
        ctx.published[name] = prop.detect(ctx, sub)
    return ctx.published[name]


def _leave_times(ctx, calls: np.ndarray) -> np.ndarray:
    """Leave time of each call (ENTER ids), once per distinct call."""
    if not len(calls):
        return np.empty(0, np.int64)
    u, which = np.unique(calls, return_inverse=True)
    leave = ctx.leave_of(u)
    return np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)), _NONE)[which]


class _Rows:
    """Columns appended in pieces: synchronisation points and their partners."""

    def __init__(self):
        self.parts = []

    def add(self, **cols):
        n = len(next(iter(cols.values())))
        if n:
            self.parts.append({k: np.broadcast_to(np.asarray(v), (n,)).astype(
                np.float64 if k in ("wait", "total", "compl") else np.int64) for k, v in cols.items()})

    def columns(self, names):
        if not self.parts:
            return {k: np.empty(0, np.float64 if k in ("wait", "total", "compl") else np.int64)
                    for k in names}
        return {k: np.concatenate([p[k] for p in self.parts]) for k in names}


def _p2p_waits(ctx):
    """The Late Sender and Late Receiver wait states as synchronisation points:
    (ls, lr) dicts of arrays, each with the waiter's and the delayer's event."""
    ls = _published(ctx, "late_sender")
    rcall, scall = ls["recv_call"], ls["send_call"]
    r_leave = _leave_times(ctx, rcall)
    s_leave = _leave_times(ctx, scall)
    # Scalasca's waiting time: the send's enter, but not after the receive's leave
    idle = np.minimum(ctx.time_of(scall), r_leave) - ctx.time_of(rcall)
    keep = idle > 0
    out_ls = {"recv": ls["recv"][keep], "send": ls["send"][keep], "wait": idle[keep],
              "r_total": (r_leave - ctx.time_of(rcall))[keep],
              "r_compl": np.maximum(r_leave - s_leave, 0)[keep],
              "s_total": (s_leave - ctx.time_of(scall))[keep],
              "s_compl": np.maximum(s_leave - r_leave, 0)[keep]}
    lr = _published(ctx, "late_receiver")
    send, recv, ccall = lr["send"], lr["recv"], lr["send_completion"]
    cmp_ev = _request_half(ctx, send, "MPI_ISEND")
    req_ev = _request_half(ctx, recv, "MPI_IRECV")
    qcall = ctx.enter_of(req_ev)
    c_leave, q_leave = _leave_times(ctx, ccall), _leave_times(ctx, qcall)
    out_lr = {"cmp": cmp_ev, "req": req_ev, "wait": lr.severity.astype(np.float64),
              "c_total": c_leave - ctx.time_of(ccall),
              "c_compl": np.where(c_leave > q_leave, 0, c_leave - q_leave),
              "q_total": q_leave - ctx.time_of(qcall),
              "q_compl": np.maximum(q_leave - c_leave, 0)}
    return out_ls, out_lr


#: kinds of collective wait states, for their delay costs
COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21 = 0, 1, 2, 3


def _collective_points(ctx, points: _Rows, partners: _Rows, groups: _Rows, delays: _Rows):
    """Synchronisation points of the MPI collectives, as Scalasca finds them."""
    from earlc.analysis import regions as rc

    coll = _published(ctx, "mpi_collectives")
    if not len(coll):
        return
    ev = ctx.events
    inst = coll["instance"]
    end = coll["end"]
    op = coll["op"]
    loc = coll["location"]
    b, e = coll["begin_time"], coll["end_time"]
    total = coll["leave_time"] - coll["enter_time"]
    c = ev.collectives
    row = ev.ref[end]
    sent = c.sent[row].view(np.int64)
    received = c.received[row].view(np.int64)
    _, which, count = np.unique(inst, return_inverse=True, return_counts=True)
    size = count[which]
    is_root = loc == coll["root"]
    big = np.iinfo(np.int64).max

    comm_of = ctx.states.coll_comm[inst].astype(np.int64)
    rows = np.arange(len(b), dtype=np.int64)
    nrows = np.int64(len(b) + 1)
    rank = np.maximum(coll["rank"], 0)

    def lowest_rank(mask):
        """Per row: the row of lowest communicator rank among the masked rows of its
        instance (MPI_MAXLOC's choice among equal times); len(b) when none."""
        v = group_min(inst, np.where(mask, rank * nrows + rows, big))
        return np.where(v < big, v % nrows, len(b))

    def delayed(sel, delayer, kind):
        """The members sel wait for the member `delayer` (row per row)."""
        idx = np.nonzero(sel & (delayer < len(b)))[0]
        d = delayer[idx]
        delays.add(event=end[idx], loc=loc[idx], delayer=end[d], delayer_loc=loc[d],
                  kind=np.full(len(idx), kind), instance=inst[idx], comm=comm_of[idx])

    def record(sel, latest, earliest_end, partner_rows=None):
        """Members sel (bool) are synchronisation points; partner_rows: for each
        member row, the rows it synchronises with (pairs of row indices), or None:
        with every member of its communicator (a group point)."""
        lb = np.minimum(latest, e)
        wait = np.maximum(lb - b, 0)
        compl = np.maximum(e - np.maximum(earliest_end, lb), 0)
        idx = np.nonzero(sel)[0]
        points.add(event=end[idx], loc=loc[idx], wait=wait[idx], total=total[idx],
                   compl=compl[idx])
        if partner_rows is None:
            groups.add(event=end[idx], group=comm_of[idx])
        else:
            a, p = partner_rows
            partners.add(event=end[a], partner=loc[p])

    def pairs(rows_a, rows_b_of_instance):
        """All (a, b) with a in rows_a and b in the rows of a's instance selected by
        rows_b_of_instance, a != b."""
        sel_b = np.nonzero(rows_b_of_instance)[0]
        if not len(rows_a) or not len(sel_b):
            return np.empty(0, np.int64), np.empty(0, np.int64)
        ib = inst[sel_b]
        order = np.argsort(ib, kind="stable")
        sel_b, ib = sel_b[order], ib[order]
        lo = np.searchsorted(ib, inst[rows_a], side="left")
        hi = np.searchsorted(ib, inst[rows_a], side="right")
        n = hi - lo
        a = np.repeat(rows_a, n)
        starts = np.repeat(lo - np.concatenate(([0], np.cumsum(n)[:-1])), n)
        bb = sel_b[np.arange(len(a)) + starts]
        keep = a != bb
        return a[keep], bb[keep]

    ok = size > 1
    # barriers: everybody synchronises
    barrier = ok & (op == rc.OP_BARRIER)
    if barrier.any():
        latest = group_max(inst, np.where(barrier, b, _NONE))
        first_end = group_min(inst, np.where(barrier, e, big))
        record(barrier, latest, first_end)
        delayed(barrier, lowest_rank(barrier & (b == latest)), COLL_BARRIER)
    # N x N (not Alltoallv/w): full overlap, or the receivers overlapping the latest sender
    nxn = ok & np.isin(op, [rc.OP_ALLGATHER, rc.OP_ALLGATHERV, rc.OP_ALLTOALL, rc.OP_ALLREDUCE,
                            rc.OP_REDUCE_SCATTER, rc.OP_REDUCE_SCATTER_BLOCK])
    payload = group_max(inst, ((sent != 0) | (received != 0)).astype(np.int64)) > 0
    nxn &= payload
    if nxn.any():
        latest_all = group_max(inst, np.where(nxn, b, _NONE))
        first_end_all = group_min(inst, np.where(nxn, e, big))
        full = first_end_all > latest_all
        s_begin = np.where(nxn & (sent != 0), b, _NONE)
        latest_s = group_max(inst, s_begin)
        # the latest sender: the first (lowest row) among the senders with that begin
        is_latest = nxn & (sent != 0) & (b == latest_s)
        first_latest = lowest_rank(is_latest)
        sync = nxn & (full | ((received > 0) & (b < latest_s)) |
                      ((sent != 0) & (rows == first_latest)))
        latest = np.where(full, latest_all, latest_s)
        first_end = np.where(full, first_end_all, group_min(inst, np.where(sync, e, big)))
        # with full overlap everybody synchronises with everybody: a group point
        record(sync & full, latest, first_end)
        part = sync & ~full
        if part.any():
            record(part, latest, first_end, pairs(np.nonzero(part)[0], part))
        delayer = np.where(full, lowest_rank(nxn & (b == latest_all)), first_latest)
        delayed(sync, delayer, COLL_NXN)
    # 1-to-N with payload: the receivers waiting for the root, and the root
    one = ok & np.isin(op, rc.OPS_ONE_TO_ALL)
    root_b = group_max(inst, np.where(one & is_root, b, _NONE))
    root_pay = group_max(inst, np.where(one & is_root & (sent != 0), 1, 0)) > 0
    one &= root_pay & (root_b != _NONE)
    if one.any():
        waits = one & ~is_root & (received > 0) & (b < root_b)
        first_end = group_min(inst, np.where(waits, e, big))
        root = one & is_root & (first_end < big)
        sync = waits | root
        record(sync, root_b, first_end,
               tuple(np.concatenate(x) for x in zip(pairs(np.nonzero(waits)[0], root),
                                                    pairs(np.nonzero(root)[0], waits))))
        delayed(sync, lowest_rank(one & is_root), COLL_12N)
    # N-to-1 with payload at the root: the root and the latest sender
    n21 = ok & np.isin(op, rc.OPS_ALL_TO_ONE)
    root_pay = group_max(inst, np.where(n21 & is_root & (received != 0), 1, 0)) > 0
    n21 &= root_pay
    if n21.any():
        latest_s = group_max(inst, np.where(n21 & (sent != 0), b, _NONE))
        is_latest = n21 & (sent != 0) & (b == latest_s)
        first_latest = lowest_rank(is_latest)
        root_b = group_max(inst, np.where(n21 & is_root, b, _NONE))
        syncing = n21 & (root_b < latest_s) & (root_b != _NONE)
        root = syncing & is_root
        last = syncing & (rows == first_latest)
        sync = root | last
        first_end = group_min(inst, np.where(sync, e, big))
        record(sync, latest_s, first_end,
               tuple(np.concatenate(x) for x in zip(pairs(np.nonzero(root)[0], last),
                                                    pairs(np.nonzero(last)[0], root))))
        delayed(sync, first_latest, COLL_N21)


def _init_finalize_points(ctx, points: _Rows, groups: _Rows):
    """The leaves of MPI_Init and MPI_Finalize: everybody synchronises."""
    for names in (("MPI_Init", "MPI_Init_thread"), ("MPI_Finalize",)):
        enters = ctx.enters_of(np.isin(ctx._region_tables[1], list(names)))
        if not len(enters):
            continue
        leave = ctx.leave_of(enters)
        enters, leave = enters[leave >= 0], leave[leave >= 0]
        if len(enters) < 1:
            continue
        te, tl = ctx.time_of(enters), ctx.time_of(leave)
        lb = np.minimum(te.max(), tl)
        loc = ctx.events.location[leave].astype(np.int64)
        # Scalasca records no waiting time at MPI_Init, only at MPI_Finalize
        wait = np.maximum(lb - te, 0) if names[0] == "MPI_Finalize" else np.zeros(len(te))
        points.add(event=leave, loc=loc, wait=wait, total=tl - te,
                   compl=np.maximum(tl - np.maximum(tl.min(), lb), 0))
        groups.add(event=leave, group=np.full(len(leave), -1))


def _omp_points(ctx, points: _Rows):
    """OpenMP synchronisation points of every thread: its ENTER of a parallel region
    (waiting 0; its call's time the fork part, completed when the first thread of
    the team entered) and the LEAVE of each team barrier (with its waiting time).
    No MPI partner, but their waiting time counts between MPI points too."""
    none = np.empty(0, np.int64)
    if not ctx.count_of_kind("THREAD_FORK", "OMP_FORK"):
        return none
    enters, fork_part, _ = ctx.thread_management()
    loc = ctx.events.location
    if len(enters):
        fork = ctx.pointer("forkptr", enters)
        t = ctx.time_of(enters)
        order = np.argsort(fork, kind="stable")
        first = np.empty(len(enters), dtype=np.int64)
        first[order] = group_min(fork[order], t[order])
        points.add(event=enters, loc=loc[enters], wait=0.0, total=fork_part,
                   compl=t - first)
    b = _published(ctx, "omp_barriers")
    leave = b["leave"] if len(b) else none
    if len(b):
        wait = group_max(b["instance"], b["enter_time"]) - b["enter_time"]
        points.add(event=leave, loc=loc[leave], wait=wait,
                   total=ctx.time_of(leave) - b["enter_time"], compl=0.0)
    n = np.int64(ctx.n_events + 1)
    ev = np.concatenate((enters, leave))
    return np.sort(loc[ev].astype(np.int64) * n + ev)


def sync_points(ctx):
    """Every synchronisation point: (points, partner keys, group keys, Late Sender
    and Late Receiver waits); points sorted by event id with event, loc, wait,
    total, compl, cnode columns; partners as sorted (location, partner, event)
    keys; group points (everybody with everybody in a communicator) as (member
    mask, sorted (location, event) keys) per communicator."""
    def compute():
        ev = ctx.events
        ls, lr = _p2p_waits(ctx)
        points, partners, groups, coll_waits = _Rows(), _Rows(), _Rows(), _Rows()
        loc = ev.location
        # the forward replay's points first: the first record of an event wins
        points.add(event=ls["recv"], loc=loc[ls["recv"]], wait=ls["wait"], total=ls["r_total"],
                   compl=ls["r_compl"])
        partners.add(event=ls["recv"], partner=loc[ls["send"]])
        _collective_points(ctx, points, partners, groups, coll_waits)
        _init_finalize_points(ctx, points, groups)
        points.add(event=lr["cmp"], loc=loc[lr["cmp"]], wait=lr["wait"], total=lr["c_total"],
                   compl=lr["c_compl"])
        partners.add(event=lr["cmp"], partner=loc[lr["req"]])
        points.add(event=ls["send"], loc=loc[ls["send"]], wait=0.0, total=ls["s_total"],
                   compl=ls["s_compl"])
        partners.add(event=ls["send"], partner=loc[ls["recv"]])
        points.add(event=lr["req"], loc=loc[lr["req"]], wait=0.0, total=lr["q_total"],
                   compl=lr["q_compl"])
        partners.add(event=lr["req"], partner=loc[lr["cmp"]])
        # OpenMP points: their waiting time, between the MPI points, propagates too
        omp_keys = _omp_points(ctx, points)
        p = points.columns(("event", "loc", "wait", "total", "compl"))
        _, first = np.unique(p["event"], return_index=True)  # sorted by event, first wins
        p = {k: v[first] for k, v in p.items()}
        p["cnode"] = ctx.cnode[p["event"]].astype(np.int64)
        q = partners.columns(("event", "partner"))
        L = np.int64(ctx.n_locations + 1)
        n = np.int64(ctx.n_events + 1)
        key = np.sort((ev.location[q["event"]].astype(np.int64) * L + q["partner"]) * n
                      + q["event"])
        # group points: per communicator (-1: every MPI process), its members and
        # the sorted (location, event) keys of its points
        g = groups.columns(("event", "group"))
        group_keys = []
        mpi_locs = np.unique(ev.location[p["event"]]) if len(p["event"]) else np.empty(0, np.int64)
        for gid in np.unique(g["group"]).tolist():
            sel = g["event"][g["group"] == gid]
            members = np.zeros(ctx.n_locations + 1, dtype=bool)
            if gid < 0:
                members[mpi_locs] = True
            else:
                cm = ctx.trace.communicators.get(int(gid))
                locs = np.asarray(cm.locations if cm is not None else [], dtype=np.int64)
                members[locs[locs >= 0]] = True
            group_keys.append((members, np.sort(ev.location[sel].astype(np.int64) * n + sel)))
        cw = coll_waits.columns(("event", "loc", "delayer", "delayer_loc", "kind", "instance",
                                 "comm"))
        return p, key, group_keys, ls, lr, cw, omp_keys
    return ctx.memo("sync_points", compute)


def _chunks(ctx):
    """Exclusive time as Scalasca's replay counts it, in chunks at ENTER and LEAVE
    events: the time since the location's previous ENTER or LEAVE, charged at an
    ENTER to the caller and at a LEAVE to the region left.  Sorted by (location,
    event): (key = location * (n+1) + event, cnode, ticks)."""
    def compute():
        ev = ctx.events
        seq = ev.loc_events  # every location's events in its order
        k = ev.kind[seq]
        # PROGRAM_BEGIN and PROGRAM_END open and close the program's call path
        program = [c for c in ctx.calltree.extra_names]
        kinds = [ctx.kinds["ENTER"], ctx.kinds["LEAVE"]]
        if program:
            kinds += [ctx.kinds["PROGRAM_BEGIN"], ctx.kinds["PROGRAM_END"]]
        # a team's join closes a stretch of the master's time (Scalasca's checkpoint)
        joins = [ctx.kinds["THREAD_JOIN"], ctx.kinds["OMP_JOIN"]]
        table = np.zeros(256, dtype=bool)
        table[kinds + joins] = True
        keep = table[k]
        kk = k[keep]
        enter = (kk == ctx.kinds["ENTER"])
        if program:
            enter |= kk == ctx.kinds["PROGRAM_BEGIN"]
        is_end = kk == ctx.kinds["PROGRAM_END"] if program else None
        table[:] = False
        table[joins] = True
        pre = enter | table[kk]
        del k, kk
        ids = seq[keep]
        counts = np.diff(ev.loc_start.astype(np.int64))
        loc = np.repeat(np.arange(len(counts), dtype=np.int64), counts)[keep]
        del keep
        t = ctx.time_of(ids)
        dt = np.empty(len(ids), dtype=np.int64)
        dt[0:1] = 0
        np.subtract(t[1:], t[:-1], out=dt[1:])
        del t
        first = np.ones(len(ids), dtype=bool)
        first[1:] = loc[1:] != loc[:-1]
        cnode = ctx.cnode[ids].astype(np.int64)
        if program:
            cnode[is_end] = program[0]
        has = enter & (cnode >= 0)
        cnode[has] = ctx.calltree.parent[cnode[has]]
        ok = ~first & (cnode >= 0)
        n = np.int64(ctx.n_events + 1)
        # keys 2 * (location * (n+1) + event) + 1 for time counted after a point at
        # that event is recorded (at a LEAVE), + 0 before it (at an ENTER)
        key = (loc[ok] * n + ids[ok]) * 2 + (~pre[ok]).astype(np.int64)
        cnode, dt = cnode[ok], dt[ok]
        # thread management counts in the parallel region, as in the call tree: on
        # every thread the fork part after its ENTER; on the master it leaves the
        # forking call path (before the ENTER), and so does the join part
        enters, fork_part, join_part = ctx.thread_management()
        if len(enters):
            c_all = ctx.cnode[enters].astype(np.int64)
            loc_all = ctx.events.location[enters].astype(np.int64)
            ok_all = c_all >= 0
            master = ok_all & (ctx.events.location[ctx.enter_of(enters)] == loc_all)
            master &= ctx.calltree.parent[np.maximum(c_all, 0)] >= 0
            e, c, mloc = enters[master], c_all[master], loc_all[master]
            pc = ctx.calltree.parent[c].astype(np.int64)
            leave = ctx.leave_of(e)
            f, j = fork_part[master], join_part[master]
            has = leave >= 0
            ea, ca, la = enters[ok_all], c_all[ok_all], loc_all[ok_all]
            extra_key = np.concatenate(((la * n + ea) * 2 + 1, (mloc * n + e) * 2,
                                        ((mloc * n + leave) * 2 + 1)[has],
                                        ((mloc * n + leave) * 2 + 1)[has]))
            extra_c = np.concatenate((ca, pc, c[has], pc[has]))
            extra_v = np.concatenate((fork_part[ok_all], -f, j[has], -j[has]))
            key = np.concatenate((key, extra_key))
            cnode = np.concatenate((cnode, extra_c))
            dt = np.concatenate((dt, extra_v))
            order = np.argsort(key, kind="stable")
            key, cnode, dt = key[order], cnode[order], dt[order]
        return key, cnode, dt
    return compute()


def _search(keys: np.ndarray, needles: np.ndarray, side: str = "left") -> np.ndarray:
    """np.searchsorted with the needles sorted first: far fewer cache misses on
    large key arrays."""
    if len(needles) < 1024:
        return np.searchsorted(keys, needles, side=side)
    order = np.argsort(needles, kind="stable")
    out = np.empty(len(needles), dtype=np.int64)
    out[order] = np.searchsorted(keys, needles[order], side=side)
    return out


def _ranges(lo: np.ndarray, hi: np.ndarray):
    """(query of each element, element index) for the ranges [lo, hi) of each query."""
    n = np.maximum(hi - lo, 0)
    q = np.repeat(np.arange(len(lo)), n)
    offs = np.repeat(lo - np.concatenate(([0], np.cumsum(n)[:-1])), n)
    return q, np.arange(len(q)) + offs


def _interval_times(ctx, chunks, loc, prev, at):
    """Per query (location, previous synchronisation point or -1, synchronisation
    point): Scalasca's pruned time map of the interval, as (query, cnode, ticks as
    float) rows with positive time, and the waiting time at the synchronisation
    points strictly in between, as (query, cnode, ticks) rows and per-query sums."""
    p = sync_points(ctx)[0]
    ckey, ccnode, cval = chunks
    n = np.int64(ctx.n_events + 1)
    start = np.where(prev >= 0, prev, -1)
    lo = _search(ckey, (loc * n + start) * 2 + 1)
    hi = _search(ckey, (loc * n + at) * 2 + 1)
    q, idx = _ranges(lo, hi)
    NC = np.int64(len(ctx.calltree) + 1)
    keys, times = sum_by_key(q * NC + ccnode[idx], cval[idx])
    # waiting time at the synchronisation points in between
    pkey = p["loc"] * n + p["event"]
    order = np.argsort(pkey, kind="stable")
    pkey_s = pkey[order]
    lo = _search(pkey_s, loc * n + start, side="right")
    hi = _search(pkey_s, loc * n + at, side="left")
    q2, idx2 = _ranges(lo, hi)
    rows = order[idx2]
    w = p["wait"][rows]
    pos = w > 0
    q2, rows, w = q2[pos], rows[pos], w[pos]
    wsum = np.bincount(q2, weights=w, minlength=len(loc))
    wkeys = q2 * NC + p["cnode"][rows]
    # time minus waits, positive part (waits in call paths without time vanish)
    allk = np.concatenate((keys, wkeys))
    allv = np.concatenate((times.astype(np.float64), -w))
    uk, inv = np.unique(allk, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, allv)
    in_time = np.zeros(len(uk), dtype=bool)
    in_time[np.searchsorted(uk, keys)] = True
    keep = in_time & (val > 0)
    uk, val = uk[keep], val[keep]
    # prune the first synchronisation point's own call before its completion
    has_prev = np.nonzero(prev >= 0)[0]
    if len(has_prev):
        prow = np.searchsorted(p["event"], prev[has_prev])
        cut = p["total"][prow] - p["compl"][prow]
        pk = has_prev * NC + p["cnode"][prow]
        at_k = np.searchsorted(uk, pk)
        hit = (at_k < len(uk)) & (uk[np.minimum(at_k, len(uk) - 1)] == pk)
        val[at_k[hit]] = np.maximum(val[at_k[hit]] - cut[hit], 0.0)
        keep = val > 0
        uk, val = uk[keep], val[keep]
    return uk // NC, uk % NC, val, wsum, (q2, rows)


def _previous_point(ctx, loc, partner, at):
    """Per query: the last synchronisation point of loc with partner before event
    `at` (-1 when none)."""
    _, pkeys, group_keys = sync_points(ctx)[:3]
    L = np.int64(ctx.n_locations + 1)
    n = np.int64(ctx.n_events + 1)
    out = np.full(len(loc), -1, dtype=np.int64)
    if len(pkeys):
        group = (loc * L + partner) * n
        i = _search(pkeys, group + at) - 1
        ok = (i >= 0) & (pkeys[np.maximum(i, 0)] >= group)
        out = np.where(ok, pkeys[np.maximum(i, 0)] - group, -1)
    for members, keys in group_keys:
        sel = np.nonzero(members[loc] & members[partner])[0]
        if not len(sel) or not len(keys):
            continue
        base = loc[sel] * n
        i = _search(keys, base + at[sel]) - 1
        ok = (i >= 0) & (keys[np.maximum(i, 0)] >= base)
        found = np.where(ok, keys[np.maximum(i, 0)] - base, -1)
        out[sel] = np.maximum(out[sel], found)
    return out


def delay_costs(ctx, chunks, waiter_loc, waiter_at, delayer_loc, delayer_at, wait):
    """Short-term delay costs of point-to-point wait states, per Scalasca's rule:
    (location, cnode, float ticks) of the delays on the late side, and per wait
    state the scale of its delays and the waiting time at the late side's points in
    between (with the points themselves, as (wait state, point row) pairs)."""
    NC = np.int64(len(ctx.calltree) + 1)
    wq, wc, wv, _, _ = _interval_times(
        ctx, chunks, waiter_loc, _previous_point(ctx, waiter_loc, delayer_loc, waiter_at), waiter_at)
    dq, dc, dv, wsum, between = _interval_times(
        ctx, chunks, delayer_loc, _previous_point(ctx, delayer_loc, waiter_loc, delayer_at), delayer_at)
    # the late side's excess per call path
    allk = np.concatenate((dq * NC + dc, wq * NC + wc))
    allv = np.concatenate((dv, -wv))
    uk, inv = np.unique(allk, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, allv)
    in_d = np.zeros(len(uk), dtype=bool)
    in_d[np.searchsorted(uk, dq * NC + dc)] = True
    keep = in_d & (val > 0)
    uk, val = uk[keep], val[keep]
    q, c = uk // NC, uk % NC
    dsum = np.bincount(q, weights=val, minlength=len(wait))
    denom = dsum + wsum
    scale = np.where(denom > 0, np.minimum(wait / np.where(denom > 0, denom, 1), 1.0), 0.0)
    return (delayer_loc[q], c, val * scale[q]), scale, wsum, between, (q, c, val, denom)


def to_ticks(n_locations, loc, cnode, value):
    """Float tick values summed per (call path, location) and rounded so that every
    location's total is its exact sum rounded (largest remainders get the ticks)."""
    if not len(loc):
        e = np.empty(0, np.int64)
        return e, e, e
    key = cnode.astype(np.int64) * (n_locations + 1) + loc
    uk, inv = np.unique(key, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, value)
    c, l = uk // (n_locations + 1), uk % (n_locations + 1)
    base = np.floor(val)
    frac = val - base
    out = base.astype(np.int64)
    want = np.rint(np.bincount(l, weights=val, minlength=n_locations + 1)).astype(np.int64)
    have = np.bincount(l, weights=out, minlength=n_locations + 1).astype(np.int64)
    extra = want - have  # ticks still to give, per location
    order = np.lexsort((-frac, l))
    rank = np.arange(len(order)) - np.searchsorted(l[order], l[order])
    give = rank < extra[l[order]]
    out[order[give]] += 1
    return c, l, out


def _expand(rows_q: np.ndarray, want_q: np.ndarray):
    """For rows sorted by query id rows_q and a list of wanted query ids: (index of
    the wanted entry, row index) of every row of each wanted query."""
    lo = np.searchsorted(rows_q, want_q, side="left")
    hi = np.searchsorted(rows_q, want_q, side="right")
    return _ranges(lo, hi)


def _group_interval_starts(ctx, cw):
    """Per collective wait instance (Scalasca's findPreviousMpiGroupSynchpoints):
    walking back from the delayer's point over its synchronisation points, the
    one where it last met every other member at once (or -1), and for members met
    one by one after that, the point where each was met last.  Returns (instance
    rows, start per instance, (instance row, member location, point) triples)."""
    p, pkeys, group_keys = sync_points(ctx)[:3]
    n = np.int64(ctx.n_events + 1)
    L = np.int64(ctx.n_locations + 1)
    # the partners of each point: a set per point-to-point point, one shared set per
    # communicator for the group points
    partners = {}
    if len(pkeys):
        ev_of = pkeys % n
        order = np.argsort(ev_of, kind="stable")
        ev_s = ev_of[order]
        partner_s = ((pkeys // n) % L)[order]
        cut = np.concatenate(([0], np.nonzero(np.diff(ev_s))[0] + 1, [len(ev_s)]))
        partners = dict(zip(ev_s[cut[:-1]].tolist(), zip(cut[:-1].tolist(), cut[1:].tolist())))
        partner_list = partner_s.tolist()
    group_of = {}
    for members, keys in group_keys:
        mset = frozenset(np.nonzero(members)[0].tolist())
        group_of.update(dict.fromkeys((keys % n).tolist(), mset))
    pkey = np.sort(p["loc"] * n + p["event"])
    pe = (pkey % n).tolist()
    _, first = np.unique(cw["instance"], return_index=True)
    d_loc_all, d_ev_all = cw["delayer_loc"][first], cw["delayer"][first]
    at = _search(pkey, d_loc_all * n + d_ev_all) - 1
    low = _search(pkey, d_loc_all * n)
    starts, triples = [], []
    comms = ctx.trace.communicators
    members_of = {}
    for k, (comm, d_loc, j, j_low) in enumerate(zip(cw["comm"][first].tolist(), d_loc_all.tolist(),
                                                  at.tolist(), low.tolist())):
        members = members_of.get(comm)
        if members is None:
            cm = comms.get(int(comm))
            members = members_of[comm] = frozenset(
                x for x in (cm.locations if cm is not None else []) if x >= 0)
        remaining = set(members)
        remaining.discard(d_loc)
        start = -1
        while j >= j_low and remaining:
            e = pe[j]
            span = partners.get(e)
            ranks = set(partner_list[span[0]:span[1]]) if span else ()
            grp = group_of.get(e)
            if grp is not None:
                ranks = grp.union(ranks) if ranks else grp
            if remaining.issubset(ranks):
                start = e
                break
            met = remaining.intersection(ranks)
            for r in met:
                triples.append((k, r, e))
            remaining -= met
            if not remaining:
                start = e
            j -= 1
        starts.append(start)
    return first, np.asarray(starts, dtype=np.int64), triples


def _collective_delays(ctx, chunks):
    """Short-term delay costs of the collective wait states, per kind: (location,
    cnode, float ticks) on the delaying member (Scalasca's collective delay)."""
    p, cw = sync_points(ctx)[0], sync_points(ctx)[5]
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    if not len(cw["event"]):
        return {k: empty for k in (COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21)}
    first, starts, triples = _group_interval_starts(ctx, cw)
    ninst = len(first)
    inst_of_row = np.searchsorted(np.unique(cw["instance"]), cw["instance"])
    d_loc_i = cw["delayer_loc"][first]
    d_ev_i = cw["delayer"][first]
    # queries: one per instance, one per member met one by one, one per waiter
    t_inst = np.asarray([t[0] for t in triples], dtype=np.int64)
    t_loc = np.asarray([t[1] for t in triples], dtype=np.int64)
    t_ev = np.asarray([t[2] for t in triples], dtype=np.int64)
    waiter = np.nonzero(cw["event"] != cw["delayer"])[0]
    w_loc, w_ev = cw["loc"][waiter], cw["event"][waiter]
    w_dloc = cw["delayer_loc"][waiter]
    w_prev = _previous_point(ctx, w_loc, w_dloc, w_ev)
    q_loc = np.concatenate((d_loc_i, d_loc_i[t_inst], w_loc))
    q_prev = np.concatenate((starts, t_ev, w_prev))
    q_at = np.concatenate((d_ev_i, d_ev_i[t_inst], w_ev))
    rq, rc, rv, wsum, (bq, brow) = _interval_times(ctx, chunks, q_loc, q_prev, q_at)
    NC = np.int64(len(ctx.calltree) + 1)
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
    # the group interval's call paths restrict every source
    gsel = rq < ninst
    gkeys = np.sort(rq[gsel] * NC + rc[gsel])
    k, r = _expand(rq, src)
    sc, sv = rc[r], rv[r]
    member = np.searchsorted(gkeys, w_inst[k] * NC + sc)
    ok = (member < len(gkeys)) & (gkeys[np.minimum(member, len(gkeys) - 1)] == w_inst[k] * NC + sc)
    k, sc, sv = k[ok], sc[ok], sv[ok]
    k2, r2 = _expand(rq, local)
    allk = np.concatenate((k * NC + sc, k2 * NC + rc[r2]))
    allv = np.concatenate((sv, -rv[r2]))
    uk, inv = np.unique(allk, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, allv)
    in_src = np.zeros(len(uk), dtype=bool)
    in_src[np.searchsorted(uk, k * NC + sc)] = True
    keep = in_src & (val > 0)
    uk, val = uk[keep], val[keep]
    wk, c = uk // NC, uk % NC
    dsum = np.bincount(wk, weights=val, minlength=len(waiter))
    prop = wsum[src]
    wait = p["wait"][np.searchsorted(p["event"], w_ev)]
    denom = dsum + prop
    scale = np.where(denom > 0, wait / np.where(denom > 0, denom, 1), 0.0)
    kind = cw["kind"][waiter]
    out = {}
    for kd in (COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21):
        sel = kind[wk] == kd
        out[kd] = (w_dloc[wk[sel]], c[sel], val[sel] * scale[wk[sel]])
    # what the long-term costs need, per instance: its members (the delayer too, with
    # the group interval's times as its delays), the waiting points in the
    # delayer's interval, and the members met one by one
    instances = []
    w_order = np.argsort(wk, kind="stable")
    wk_s, c_s, v_s = wk[w_order], c[w_order], val[w_order]
    w_bounds = np.searchsorted(wk_s, np.arange(len(waiter) + 1))
    g_order = np.argsort(rq, kind="stable")
    rq_s, rc_s, rv_s = rq[g_order], rc[g_order], rv[g_order]
    g_bounds = np.searchsorted(rq_s, np.arange(ninst + 1))
    b_order = np.argsort(bq, kind="stable")
    bq_s, brow_s = bq[b_order], brow[b_order]
    b_bounds = np.searchsorted(bq_s, np.arange(ninst + 1))
    inter = {}
    for k_i, l_i, e_i in triples:
        inter.setdefault(k_i, {})[l_i] = e_i
    members_of = {}
    for j, k_i in enumerate(w_inst.tolist()):
        members_of.setdefault(k_i, []).append(j)
    kinds_i = cw["kind"][first]
    w_ev_l, wait_l, dsum_l = w_ev.tolist(), wait.tolist(), dsum.tolist()
    prop_l, w_loc_l = prop.tolist(), w_loc.tolist()
    for k_i in range(ninst):
        g0, g1 = g_bounds[k_i], g_bounds[k_i + 1]
        gc, gv = rc_s[g0:g1], rv_s[g0:g1]
        root = (int(d_ev_i[k_i]), 0.0, gc, gv, float(gv.sum()), float(wsum[k_i]), None)
        members = [root]
        ints = inter.get(k_i, {})
        for j in members_of.get(k_i, []):
            a, b_ = w_bounds[j], w_bounds[j + 1]
            members.append((w_ev_l[j], wait_l[j], c_s[a:b_], v_s[a:b_], dsum_l[j], prop_l[j],
                            ints.get(w_loc_l[j])))
        rows = brow_s[b_bounds[k_i]:b_bounds[k_i + 1]]
        rows = rows[np.argsort(p["event"][rows])].tolist()
        instances.append((int(kinds_i[k_i]), int(d_loc_i[k_i]), members, rows))
    return out, instances


def _omp_barrier_delays(ctx, chunks):
    """Short-term delay costs of OpenMP barrier waits (Scalasca's OpenMP barrier
    delay): each waiting thread's interval since its previous OpenMP point against
    the last thread's, charged to the last thread: (location, cnode, float ticks)."""
    omp_keys = sync_points(ctx)[6]
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    if not len(omp_keys):
        return empty
    b = _published(ctx, "omp_barriers")
    if not len(b):
        return empty
    n = np.int64(ctx.n_events + 1)
    inst, leave, t = b["instance"], b["leave"], b["enter_time"]
    loc = ctx.events.location[leave].astype(np.int64)
    i = _search(omp_keys, loc * n + leave) - 1
    prev = np.where((i >= 0) & (omp_keys[np.maximum(i, 0)] >= loc * n),
                    omp_keys[np.maximum(i, 0)] - loc * n, -1)
    rq, rc, rv, wsum, _ = _interval_times(ctx, chunks, loc, prev, leave)
    NC = np.int64(len(ctx.calltree) + 1)
    # the last thread to arrive (lowest location among equal times)
    big = np.iinfo(np.int64).max
    latest_t = group_max(inst, t)
    nrows = np.int64(len(t) + 1)
    last = group_min(inst, np.where(t == latest_t, loc * nrows + np.arange(len(t)), big)) % nrows
    wait = (latest_t - t).astype(np.float64)
    k, r = _expand(rq, last)
    k2, r2 = _expand(rq, np.arange(len(t)))
    allk = np.concatenate((k * NC + rc[r], k2 * NC + rc[r2]))
    allv = np.concatenate((rv[r], -rv[r2]))
    uk, inv = np.unique(allk, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, allv)
    in_src = np.zeros(len(uk), dtype=bool)
    in_src[np.searchsorted(uk, k * NC + rc[r])] = True
    keep = in_src & (val > 0)
    uk, val = uk[keep], val[keep]
    wk, c = uk // NC, uk % NC
    dsum = np.bincount(wk, weights=val, minlength=len(t))
    denom = dsum + wsum[last]
    scale = np.where(denom > 0, wait / np.where(denom > 0, denom, 1), 0.0)
    return loc[last[wk]], c, val * scale[wk]


def _omp_idle_delays(ctx, chunks):
    """Short-term delay costs of idle worker threads (Scalasca's OpenMP idleness
    delay): the master's time outside parallel regions, from a team's join to the
    next fork (or the end), per call path without the waiting time at the points in
    between, times the number of worker threads left idle: (location, cnode, float
    ticks) on the master."""
    omp_keys = sync_points(ctx)[6]
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
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
    i = _search(omp_keys, loc * n + at) - 1
    prev = np.where((i >= 0) & (omp_keys[np.maximum(i, 0)] >= loc * n),
                    omp_keys[np.maximum(i, 0)] - loc * n, -1)
    # the first join after the previous point (or the location's start)
    jn = ctx.events_of_kind("THREAD_JOIN", "OMP_JOIN")
    jkey = np.sort(loc_of[jn].astype(np.int64) * n + jn)
    j = _search(jkey, loc * n + prev)
    ok = (j < len(jkey)) & (jkey[np.minimum(j, len(jkey) - 1)] < loc * n + at)
    start = np.where((prev >= 0) & ok, jkey[np.minimum(j, len(jkey) - 1)] - loc * n, -1)
    start = np.where(prev >= 0, start, -1)
    q, c, v = _chunk_sums(ctx, chunks, loc, start, at)
    # waiting time at every point between the previous OpenMP point and the fork
    _, _, _, wsum, (bq, brow) = _interval_times(ctx, chunks, loc, prev, at)
    p = sync_points(ctx)[0]
    NC = np.int64(len(ctx.calltree) + 1)
    allk = np.concatenate((q * NC + c, bq * NC + p["cnode"][brow]))
    allv = np.concatenate((v, -p["wait"][brow]))
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
    return loc[qq], cc, val * scale[qq]


def _long_term_costs(ctx, p, waits, collectives=()):
    """Long-term delay costs (Scalasca's backward replay): the waiting time a wait
    state propagates to later ones is a cost that flows back to the wait states in
    its late side's interval, and from there to the delays that caused them.  Wait
    states are taken latest first, so that the cost arriving at each is complete
    when it is passed on.  Costs are tracked per kind of wait state they stem from
    (point-to-point and collective wait states)."""
    sources = ["ls", "lr", COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21]
    items = []  # (processing key, type, index)
    per_kind = {}
    for kind, waiter, dl, scale, denom, (dq, dc, dv), (bq, brow) in waits:
        o = np.argsort(dq, kind="stable")
        dq_s, dc_s, dv_s = dq[o], dc[o], dv[o]
        ds = np.searchsorted(dq_s, np.arange(len(waiter) + 1))
        ob = np.argsort(bq, kind="stable")
        bq_s, brow_s = bq[ob], brow[ob]
        bs = np.searchsorted(bq_s, np.arange(len(waiter) + 1))
        per_kind[kind] = (dl.tolist(), scale.tolist(), denom.tolist(), dc_s.tolist(),
                          dv_s.tolist(), ds.tolist(), brow_s.tolist(), bs.tolist())
        items += [(int(e), 0, kind, i) for i, e in enumerate(waiter.tolist())]
    for k, (_, _, members, _) in enumerate(collectives):
        items.append((max(m[0] for m in members), 1, None, k))
    if not items:
        return {}
    items.sort(key=lambda x: (x[0], x[1]), reverse=True)
    p_event = p["event"].tolist()
    p_wait = p["wait"].tolist()
    costs = {k: {} for k in sources}
    severity = {k: {} for k in sources}

    def add_severity(src, loc, cs, vs, factor):
        sev = severity[src]
        for c, v in zip(cs.tolist() if hasattr(cs, "tolist") else cs,
                        vs.tolist() if hasattr(vs, "tolist") else vs):
            key = (loc, c)
            sev[key] = sev.get(key, 0.0) + factor * v

    for e, typ, kind, i in items:
        if typ == 0:
            dl, scale, denom, dc, dv, ds, brow, bs = per_kind[kind]
            den = denom[i]
            if not den > 0:
                continue
            for src in sources:
                sc = costs[src].get(e, 0.0) / den
                if sc > 0:
                    add_severity(src, dl[i], dc[ds[i]:ds[i + 1]], dv[ds[i]:ds[i + 1]], sc)
                total = sc + (scale[i] if src == kind else 0.0)
                if total > 0:
                    cm = costs[src]
                    for j in range(bs[i], bs[i + 1]):
                        r = brow[j]
                        cm[p_event[r]] = cm.get(p_event[r], 0.0) + total * p_wait[r]
            continue
        kind, dloc, members, rows = collectives[i]
        for src in sources:
            inputs = [("cost", [costs[src].get(m[0], 0.0) for m in members])]
            if src == kind:
                inputs.append(("wait", [m[1] for m in members]))
            for what, inp in inputs:
                scales = []
                for m, x in zip(members, inp):
                    den = m[4] + m[5]
                    scales.append(x / den if den > 0 else 0.0)
                if what == "cost":
                    for m, sc in zip(members, scales):
                        if sc > 0:
                            add_severity(src, dloc, m[2], m[3], sc)
                # scales along the delayer's interval: members met one by one join
                # at the point where they were met (Scalasca's scale map)
                base = sum(scales)
                inc = {}
                for m, sc in zip(members, scales):
                    if m[6] is not None:
                        base -= sc
                        inc[m[6]] = inc.get(m[6], 0.0) + sc
                marks = sorted(inc)
                values, run = [], base
                for sp in marks:
                    values.append(run)
                    run += inc[sp]
                cm = costs[src]
                j, current = 0, base
                for r in rows:
                    ev_r = p_event[r]
                    while j < len(marks) and marks[j] <= ev_r:
                        current = values[j]
                        j += 1
                    if current > 0 and p_wait[r] > 0:
                        cm[ev_r] = cm.get(ev_r, 0.0) + current * p_wait[r]
    out = {}
    for src in sources:
        items_ = severity[src]
        l = np.asarray([k[0] for k in items_], dtype=np.int64)
        c = np.asarray([k[1] for k in items_], dtype=np.int64)
        v = np.asarray(list(items_.values()), dtype=np.float64)
        out["longterm_%s" % src] = to_ticks(ctx.n_locations, l, c, v)
    return out


def _delays(ctx):
    """The short-term delay costs of every kind of wait state, computed together
    so that the time chunks of the replay are built once and freed after."""
    def compute():
        ls, lr = sync_points(ctx)[3:5]
        loc = ctx.events.location
        queries = {
            "ls": (ls["recv"], ls["send"], ls["wait"].astype(np.float64)),
            "lr": (lr["cmp"], lr["req"], lr["wait"]),
        }
        out = {}
        chunks = None
        coll_instances = []
        cw = sync_points(ctx)[5]
        if len(sync_points(ctx)[6]):
            chunks = _chunks(ctx)
            out["omp_barrier"] = to_ticks(ctx.n_locations, *_omp_barrier_delays(ctx, chunks))
            out["omp_idle"] = to_ticks(ctx.n_locations, *_omp_idle_delays(ctx, chunks))
        if len(cw["event"]):
            chunks = chunks if chunks is not None else _chunks(ctx)
            coll_out, coll_instances = _collective_delays(ctx, chunks)
            for kind, (l, c, v) in coll_out.items():
                out[kind] = to_ticks(ctx.n_locations, l, c, v)
        p = sync_points(ctx)[0]
        prop_rows, prop_vals = [], []
        long_term = []
        for kind, (waiter, delayer, wait) in queries.items():
            if not len(waiter):
                continue
            if chunks is None:
                chunks = _chunks(ctx)
            wl = loc[waiter].astype(np.int64)
            dl = loc[delayer].astype(np.int64)
            costs, scale, wsum, (bq, brow), (dq, dc, dv, denom) = delay_costs(
                ctx, chunks, wl, waiter, dl, delayer, wait)
            long_term.append((kind, waiter, dl, scale, denom, (dq, dc, dv), (bq, brow)))
            out[kind] = to_ticks(ctx.n_locations, *costs)
            # indirect: the part of each wait explained by waiting the late side did
            # in between, charged to the waiting call
            out["indirect_" + kind] = to_ticks(ctx.n_locations, wl, ctx.cnode[waiter],
                                               np.where(wsum > 0, scale * wsum, 0.0))
            # propagating: those waits in between, each as much as any later wait
            # state it caused needs of it
            use = (scale[bq] > 0) & (wsum[bq] > 0)
            prop_rows.append(brow[use])
            prop_vals.append(scale[bq[use]] * p["wait"][brow[use]])
        out.update(_long_term_costs(ctx, p, long_term, coll_instances))
        if prop_rows:
            rows = np.concatenate(prop_rows)
            best = np.zeros(len(p["event"]))
            np.maximum.at(best, rows, np.concatenate(prop_vals))
            hit = np.nonzero(best > 0)[0]
            k = ctx.events.kind[p["event"][hit]]
            kinds = ctx.kinds
            for name, sel in (("propagating_ls", (k == kinds["MPI_RECV"]) | (k == kinds["MPI_IRECV"])),
                              ("propagating_lr", (k == kinds["MPI_SEND"]) |
                               (k == kinds["MPI_ISEND_COMPLETE"]))):
                r = hit[sel]
                out[name] = to_ticks(ctx.n_locations, p["loc"][r], p["cnode"][r], best[r])
        e = np.empty(0, np.int64)
        for kind in (COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21, "omp_barrier", "omp_idle",
                     "ls", "lr", "longterm_%d" % COLL_BARRIER, "longterm_%d" % COLL_NXN,
                     "longterm_%d" % COLL_12N, "longterm_%d" % COLL_N21,
                     "indirect_ls", "indirect_lr", "propagating_ls", "propagating_lr",
                     "longterm_ls", "longterm_lr"):
            out.setdefault(kind, (e, e, e))
        return out
    return ctx.memo("delay_costs", compute)


def _chunk_sums(ctx, chunks, loc, lo_ev, hi_ev):
    """Raw exclusive time (float ticks) per query and call path between two events
    of a location, as Scalasca's replay counts it: (query, cnode, ticks)."""
    ckey, ccnode, cval = chunks
    n = np.int64(ctx.n_events + 1)
    lo = _search(ckey, (loc * n + lo_ev) * 2 + 1)
    hi = _search(ckey, (loc * n + hi_ev) * 2 + 1)
    q, idx = _ranges(lo, hi)
    NC = np.int64(len(ctx.calltree) + 1)
    keys, times = sum_by_key(q * NC + ccnode[idx], cval[idx])
    return keys // NC, keys % NC, times.astype(np.float64)


def _critical_path(ctx):
    """Scalasca's critical path of an MPI program and its metrics, as float ticks
    per (location, cnode): the path starts on the process entering MPI_Finalize
    last and runs back in time; at each wait state on it, it moves to the process
    waited for (the sender of a Late Sender, the receiver of a Late Receiver, the
    latest member or the root of a collective), until MPI_Init.  Each stretch
    counts the exclusive time per call path between its two ends, without the
    waiting time at its start."""
    def compute():
        p, _, _, ls, lr, cw = sync_points(ctx)[:6]
        ev = ctx.events
        loc = ev.location
        n = np.int64(ctx.n_events + 1)
        # wait states on the path, and where the path continues from each
        partner = {}
        for a, b in ((ls["recv"], ls["send"]), (lr["cmp"], lr["req"])):
            partner.update(zip(a.tolist(), b.tolist()))
        wsel = cw["event"] != cw["delayer"]
        partner.update(zip(cw["event"][wsel].tolist(), cw["delayer"][wsel].tolist()))
        wait_of = dict(zip(p["event"].tolist(), p["wait"].tolist()))
        cnode_of = dict(zip(p["event"].tolist(), p["cnode"].tolist()))
        ws = np.asarray(sorted(e for e in partner if wait_of.get(e, 0.0) > 0), dtype=np.int64)
        wkey = np.sort(loc[ws].astype(np.int64) * n + ws) if len(ws) else ws
        # MPI_Init and MPI_Finalize
        def leaves(names):
            enters = ctx.enters_of(np.isin(ctx._region_tables[1], list(names)))
            lv = ctx.leave_of(enters)
            return enters[lv >= 0], lv[lv >= 0]
        fin_enter, fin_leave = leaves(("MPI_Finalize",))
        init_enter, init_leave = leaves(("MPI_Init", "MPI_Init_thread"))
        if not len(fin_leave) or not len(init_leave):
            return None
        init_of = dict(zip(loc[init_leave].tolist(), init_leave.tolist()))
        t = ctx.time_of(fin_enter)
        start = np.lexsort((loc[fin_enter], -t))[0]
        # OpenMP: at a thread's fork point (its ENTER of a parallel region) the path
        # moves to the master's fork point; at a team barrier it continues on the
        # threads that did not wait there
        omp_next = {}
        omp_keys = sync_points(ctx)[6]
        if len(omp_keys):
            enters = ctx.thread_management()[0]
            fork = ctx.pointer("forkptr", enters)
            master = loc[ctx.enter_of(enters)] == loc[enters]
            master_enter = dict(zip(fork[master].tolist(), enters[master].tolist()))
            for e, f in zip(enters.tolist(), fork.tolist()):
                if f in master_enter:
                    omp_next[e] = [master_enter[f]]
            b = _published(ctx, "omp_barriers")
            if len(b):
                bw = group_max(b["instance"], b["enter_time"]) - b["enter_time"]
                inst, leave = b["instance"].tolist(), b["leave"].tolist()
                free = {}
                for k, i in enumerate(inst):
                    if bw[k] <= 0:
                        free.setdefault(i, []).append(leave[k])
                for k, i in enumerate(inst):
                    omp_next[leave[k]] = free.get(i, [])
        mpi_keys = wkey
        stretches = []  # (location, from event, to event)
        todo = {(int(loc[fin_leave[start]]), int(fin_leave[start]))}
        while todo:
            cur, end = max(todo, key=lambda x: x[1])  # latest first: paths merge at forks
            todo.discard((cur, end))
            i = int(np.searchsorted(mpi_keys, cur * n + end)) - 1
            x_mpi = int(mpi_keys[i] - cur * n) if i >= 0 and mpi_keys[i] >= cur * n else -1
            i = int(np.searchsorted(omp_keys, cur * n + end)) - 1 if len(omp_keys) else -1
            x_omp = int(omp_keys[i] - cur * n) if i >= 0 and omp_keys[i] >= cur * n else -1
            if x_mpi < 0 and x_omp < 0:
                if cur in init_of:
                    stretches.append((cur, init_of[cur], end))
                continue
            x = max(x_mpi, x_omp)
            stretches.append((cur, x, end))
            nxt = [partner[x]] if x == x_mpi else omp_next.get(x, [])
            for e in nxt:
                todo.add((int(loc[e]), int(e)))
        sl = np.asarray([x[0] for x in stretches], dtype=np.int64)
        sf = np.asarray([x[1] for x in stretches], dtype=np.int64)
        st = np.asarray([x[2] for x in stretches], dtype=np.int64)
        chunks = _chunks(ctx)
        q, c, v = _chunk_sums(ctx, chunks, sl, sf, st)
        NL = ctx.n_locations + 1
        NC = len(ctx.calltree) + 1
        cp = np.zeros((NL, NC))
        np.add.at(cp, (sl[q], c), v)
        # without the waiting time at the start of each stretch
        for (l, f, _), k in zip(stretches, range(len(stretches))):
            cn = cnode_of.get(f, int(ctx.cnode[f]))
            if cn < 0:
                continue
            own = v[(q == k) & (c == cn)].sum()
            cp[l, cn] -= min(wait_of.get(f, 0.0), own)
        # every CPU location's time without its waiting time; a worker thread counts
        # only from each fork of its team to its last OpenMP point before the next
        # (Scalasca drops a worker's time outside its teams)
        cpu_locs = np.asarray([l.index for l in ctx.trace.locations if l.type == "CPU_THREAD"],
                              dtype=np.int64)
        workers = np.empty(0, np.int64)
        if len(omp_keys):
            enters = ctx.thread_management()[0]
            wsel = loc[ctx.enter_of(enters)] != loc[enters]
            workers = np.unique(loc[enters[wsel]].astype(np.int64))
        whole = np.setdiff1d(cpu_locs, workers)
        r_loc = [whole]
        r_lo = [np.full(len(whole), -1, dtype=np.int64)]
        r_hi = [np.full(len(whole), ctx.n_events, dtype=np.int64)]
        if len(workers):
            fe = enters[wsel]
            fl = loc[fe].astype(np.int64)
            fkey = np.sort(fl * n + fe)
            fl, fe = fkey // n, fkey % n
            nxt_key = np.empty(len(fkey), dtype=np.int64)
            nxt_key[:-1] = fkey[1:]
            last_of_loc = np.ones(len(fkey), dtype=bool)
            last_of_loc[:-1] = fl[1:] != fl[:-1]
            nxt_key[last_of_loc] = fl[last_of_loc] * n + ctx.n_events
            j = np.searchsorted(omp_keys, nxt_key) - 1
            last = omp_keys[np.maximum(j, 0)] - fl * n
            ok = (j >= 0) & (omp_keys[np.maximum(j, 0)] >= fl * n) & (last > fe)
            r_loc.append(fl[ok])
            r_lo.append(fe[ok])
            r_hi.append(last[ok])
        everything = _chunk_sums(ctx, chunks, np.concatenate(r_loc), np.concatenate(r_lo),
                                 np.concatenate(r_hi))
        lt = np.zeros((NL, NC))
        np.add.at(lt, (np.concatenate(r_loc)[everything[0]], everything[1]), everything[2])
        wt = np.zeros((NL, NC))
        ok = p["cnode"] >= 0
        np.add.at(wt, (p["loc"][ok], p["cnode"][ok]), np.maximum(p["wait"][ok], 0))
        ltimes = lt - np.minimum(lt, wt)
        g = cp.sum(axis=0)
        on = g > 0
        activities = np.where(on[None, :], np.minimum(g[None, :], ltimes), 0.0)
        non_critical = np.maximum(ltimes - g[None, :], 0.0)
        cpu = np.zeros(NL, dtype=bool)
        cpu[[l.index for l in ctx.trace.locations if l.type == "CPU_THREAD"]] = True
        excess = np.maximum(g[None, :] - ltimes, 0.0)
        aggr_wait = g.sum() - ltimes.sum(axis=1)
        aggr_excess = excess.sum(axis=1)
        factor = np.where(aggr_excess > 0, aggr_wait / np.where(aggr_excess > 0, aggr_excess, 1), 0.0)
        global_costs = (excess * factor[:, None])[cpu].sum(axis=0)
        share = np.where(on[None, :] & (cp > 0), cp / np.where(on, g, 1)[None, :], 0.0)
        imbalance = np.maximum(share * global_costs[None, :], 0.0)

        def rows(m):
            l, c = np.nonzero(m)
            return to_ticks(ctx.n_locations, l, c, m[l, c])
        return {"critical_path": rows(cp), "critical_path_activities": rows(activities),
                "non_critical_path_activities": rows(non_critical),
                "critical_imbalance_impact": rows(imbalance)}
    return ctx.memo("critical_path", compute)


class _CriticalPath(Property):
    unit, group = "sec", "root_cause"

    def totals(self, ctx):
        out = _critical_path(ctx)
        if out is None:
            e = np.empty(0, np.int64)
            return e, e, e
        return out[self.name]


class CriticalPath(_CriticalPath):
    name, title, cube_id = "critical_path", "Critical path", "critical_path"
    description = ("The critical path: from the process that enters MPI_Finalize last back "
                   "in time, moving at every wait state to the process waited for, until "
                   "MPI_Init. Its time per call path and location, without waiting time: what "
                   "determines the program's run time.")
    diagnosis = ("Only call paths on the critical path shorten the run when optimised; a "
                 "large share on one process points to imbalance or serial work.")


class CriticalPathActivities(_CriticalPath):
    name, title = "critical_path_activities", "Critical-path activities"
    cube_id = "critical_path_activities"
    description = ("Per location, the time (without waiting) in call paths that appear on the "
                   "critical path, at most their time on the path.")
    diagnosis = "The resources the critical path's activities consume everywhere."


class CriticalImbalanceImpact(_CriticalPath):
    name, title = "critical_imbalance_impact", "Critical-path imbalance impact"
    cube_id = "critical_imbalance_impact"
    description = ("The waiting time of all locations mapped onto the call paths that spend "
                   "more time on the critical path than on a location (their excess), in "
                   "proportion to their time on the path.")
    diagnosis = "Imbalanced activities with a global effect on run time: balance them first."


class NonCriticalPathActivities(_CriticalPath):
    name, title = "non_critical_path_activities", "Non-critical-path activities"
    cube_id = "non_critical_path_activities"
    description = ("Per location, the time (without waiting) in call paths beyond their time "
                   "on the critical path: optimising it does not shorten the run.")
    diagnosis = "Work off the critical path: not worth optimising for run time."


class _Delay(Property):
    unit, group = "sec", "root_cause"
    kind = "ls"

    def totals(self, ctx):
        return _delays(ctx)[self.kind]


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
    kind = "lr"
    cube_id = "delay_latereceiver"
    explains = "late_receiver"
    description = ("The call paths that made receivers late: for each Late Receiver, the "
                   "receiver's excess time per call path over the sender's since their previous "
                   "synchronisation point, scaled to the waiting time it caused. Charged to the "
                   "receiver's call paths.")
    diagnosis = "Post the receives earlier, or move work out of these call paths."


class DelayBarrier(_Delay):
    name, title = "delay_barrier", "Barrier delay costs (short-term)"
    kind = COLL_BARRIER
    cube_id = "delay_barrier"
    explains = "wait_at_barrier"
    description = ("The call paths that made the last process late at an MPI_Barrier: per "
                   "waiting process, the last one's excess time per call path since they last "
                   "all met, scaled to that process's waiting time. Charged to the last one.")
    diagnosis = "Balance the work in these call paths before the barrier."


class DelayNxN(_Delay):
    name, title = "delay_n2n", "N x N delay costs (short-term)"
    kind = COLL_NXN
    cube_id = "delay_n2n"
    explains = "wait_at_nxn"
    description = ("The call paths that made the latest member late at an N x N collective "
                   "(Allreduce, Allgather, Alltoall, Reduce_scatter): its excess time per call "
                   "path over each waiting member since they last met, scaled to the waiting "
                   "time. Charged to the latest member.")
    diagnosis = "Balance the work in these call paths before the collective."


class Delay12N(_Delay):
    name, title = "delay_12n", "1-to-N delay costs (short-term)"
    kind = COLL_12N
    cube_id = "delay_12n"
    explains = "late_broadcast"
    description = ("The call paths that made the root of a broadcast or scatter late: its "
                   "excess time per call path over each waiting receiver since they last met, "
                   "scaled to the waiting time. Charged to the root.")
    diagnosis = "Reduce the root's work before the broadcast, or give it to others."


class DelayN21(_Delay):
    name, title = "delay_n21", "N-to-1 delay costs (short-term)"
    kind = COLL_N21
    cube_id = "delay_n21"
    explains = "early_reduce"
    description = ("The call paths that made the latest sender of a reduction or gather late "
                   "for its root: its excess time per call path since they last met, scaled to "
                   "the root's waiting time. Charged to the latest sender.")
    diagnosis = "Balance the senders' work before the reduction."


class DelayOmpBarrier(_Delay):
    name, title = "delay_ompbarrier", "OpenMP barrier delay costs (short-term)"
    kind = "omp_barrier"
    cube_id = "delay_ompbarrier"
    explains = "omp_barrier_wait_implicit"
    description = ("The call paths that made the last thread late at an OpenMP barrier: its "
                   "excess time per call path over each waiting thread since their previous "
                   "OpenMP synchronisation point (the fork or the previous barrier), scaled to "
                   "that thread's waiting time. Charged to the last thread.")
    diagnosis = "Balance the loop iterations or tasks of these call paths across the threads."


class DelayOmpIdle(_Delay):
    name, title = "delay_ompidle", "OpenMP idleness delay costs (short-term)"
    kind = "omp_idle"
    cube_id = "delay_ompidle"
    explains = "idle_threads"
    description = ("The master's call paths outside parallel regions that leave worker "
                   "threads idle: its time from a team's join to the next fork (without "
                   "waiting at synchronisation points), times the number of idle workers.")
    diagnosis = "Parallelise these call paths, or run fewer threads per process."


class _DelayCollectiveLongTerm(_Delay):
    diagnosis = ("Delays with far-reaching effects: an imbalance here spreads through "
                 "collectives to other processes. Fix it, or decouple the processes.")


class DelayBarrierLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_barrier_longterm", "Barrier delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_BARRIER, "delay_barrier_longterm", "wait_at_barrier"
    description = "The call paths whose delays cause waiting at MPI barriers indirectly."


class DelayNxNLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_n2n_longterm", "N x N delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_NXN, "delay_n2n_longterm", "wait_at_nxn"
    description = "The call paths whose delays cause waiting at N x N collectives indirectly."


class Delay12NLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_12n_longterm", "1-to-N delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_12N, "delay_12n_longterm", "late_broadcast"
    description = "The call paths whose delays cause waiting at broadcasts indirectly."


class DelayN21LongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_n21_longterm", "N-to-1 delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_N21, "delay_n21_longterm", "early_reduce"
    description = "The call paths whose delays cause waiting at reductions indirectly."


class DelayLateSenderLongTerm(_Delay):
    name, title = "delay_latesender_longterm", "Late Sender delay costs (long-term)"
    kind = "longterm_ls"
    cube_id = "delay_latesender_longterm"
    explains = "late_sender"
    description = ("The call paths whose delays cause Late Sender waits indirectly: waiting "
                   "time that propagated through other wait states (the indirect part of Late "
                   "Sender) traced back to the delays at its origin.")
    diagnosis = ("Delays with far-reaching effects: an imbalance here spreads along the "
                 "communication chain. Fix it, or decouple with non-blocking communication.")


class DelayLateReceiverLongTerm(_Delay):
    name, title = "delay_latereceiver_longterm", "Late Receiver delay costs (long-term)"
    kind = "longterm_lr"
    cube_id = "delay_latereceiver_longterm"
    explains = "late_receiver"
    description = ("The call paths whose delays cause Late Receiver waits indirectly, through "
                   "other wait states.")
    diagnosis = "Delays with far-reaching effects: fix them, or post receives earlier."


class IndirectLateSender(_Delay):
    name, title, parent = "late_sender_indirect", "Indirect (propagated) Late Sender", "late_sender"
    kind = "indirect_ls"
    cube_id = "mpi_wait_indirect_latesender"
    description = ("The part of each Late Sender's waiting time that the sender itself spent "
                   "waiting since the two last met (wait states propagating to this one), "
                   "rather than in delays of its own. Charged to the waiting receive.")
    diagnosis = "Look for the root cause further back: where the sender itself waited."


class IndirectLateReceiver(_Delay):
    name, title, parent = ("late_receiver_indirect", "Indirect (propagated) Late Receiver",
                           "late_receiver")
    kind = "indirect_lr"
    cube_id = "mpi_wait_indirect_latereceiver"
    description = ("The part of each Late Receiver's waiting time that the receiver itself "
                   "spent waiting since the two last met. Charged to the waiting send.")
    diagnosis = "Look for the root cause further back: where the receiver itself waited."


class PropagatingLateSender(_Delay):
    name, title, parent = ("late_sender_propagating", "Propagating Late Sender",
                           "late_sender")
    kind = "propagating_ls"
    cube_id = "mpi_wait_propagating_ls"
    description = ("Late Sender waiting time that propagates: the part of a Late Sender wait "
                   "on a location that later makes another location wait for it (the largest "
                   "such part over the wait states it causes).")
    diagnosis = "Removing these waits removes more waiting elsewhere: fix their causes first."


class PropagatingLateReceiver(_Delay):
    name, title, parent = ("late_receiver_propagating", "Propagating Late Receiver",
                           "late_receiver")
    kind = "propagating_lr"
    cube_id = "mpi_wait_propagating_lr"
    description = ("Late Receiver waiting time that propagates: the part of a Late Receiver "
                   "wait that later makes another location wait for the sender.")
    diagnosis = "Removing these waits removes more waiting elsewhere: fix their causes first."


PROPERTIES = (DelayLateSender, DelayLateReceiver, DelayBarrier, DelayNxN, Delay12N, DelayN21,
              DelayOmpBarrier, DelayOmpIdle, DelayLateSenderLongTerm, DelayBarrierLongTerm,
              DelayNxNLongTerm, Delay12NLongTerm, DelayN21LongTerm, DelayLateReceiverLongTerm,
              IndirectLateSender, IndirectLateReceiver, PropagatingLateSender,
              PropagatingLateReceiver, CriticalPath, CriticalPathActivities,
              CriticalImbalanceImpact, NonCriticalPathActivities)
