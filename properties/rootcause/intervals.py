"""Synchronisation intervals: the exclusive time per call path that a location
spends between two of its synchronisation points (counted at ENTER and LEAVE
events), without the waiting time at the points in between; the building block
of delay costs and of the critical path."""
import numpy as np

from earlc.analysis.severity import sum_by_key

from .points import sync_points


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
