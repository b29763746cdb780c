"""Delay costs: the waiting time of each wait state charged to the call paths in
which the late location spent more time than the waiting one since their
previous synchronisation point (short-term), and, through the waits those
delays caused in turn, to their own causes (long-term); the indirect and
propagating waits; and the properties that publish them."""
import numpy as np

from earlc.analysis import Property

from ..groups import group_max, group_min
from .intervals import (_chunk_sums, _chunks, _expand, _group_interval_starts,
                        _interval_times, _previous_point, _search, to_ticks)
from .points import COLL_12N, COLL_BARRIER, COLL_N21, COLL_NXN, _published, sync_points

#: kinds of OpenMP wait states, for their delay costs (the MPI ones are COLL_*, "ls", "lr")
OMP_BARRIER, OMP_IDLE = "omp_barrier", "omp_idle"


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
    # OpenMP barrier waits of the delayer take a collective's cost only when its
    # interval starts at a collective (or at the start of the trace), not at a
    # message's synchronisation point: so Scalasca's long-term costs come out
    ls, lr = sync_points(ctx)[3:5]
    message_points = np.concatenate((ls["recv"], ls["send"], lr["cmp"], lr["req"]))
    keep_omp = (starts < 0) | ~np.isin(starts, message_points)
    is_omp = np.isin(p["event"], sync_points(ctx)[6] % np.int64(ctx.n_events + 1))
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
        rows = rows[np.argsort(p["event"][rows])]
        rows = rows[keep_omp[k_i] | ~is_omp[rows]].tolist()
        instances.append((int(kinds_i[k_i]), int(d_loc_i[k_i]), members, rows))
    return out, instances


def _omp_barrier_delays(ctx, chunks):
    """Short-term delay costs of OpenMP barrier waits (Scalasca's OpenMP barrier
    delay): each waiting thread's interval since its previous OpenMP point against
    the last thread's, charged to the last thread: (location, cnode, float ticks);
    and per barrier instance what its long-term costs need, in the form of the MPI
    collectives' instances (see _long_term_costs): every thread as a member (the
    last one with no delays of its own), and the waiting points in the last
    thread's interval."""
    omp_keys = sync_points(ctx)[6]
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0))
    if not len(omp_keys):
        return empty, []
    b = _published(ctx, "omp_barriers")
    if not len(b):
        return empty, []
    n = np.int64(ctx.n_events + 1)
    inst, leave, t = b["instance"], b["leave"], b["enter_time"]
    loc = ctx.events.location[leave].astype(np.int64)
    i = _search(omp_keys, loc * n + leave) - 1
    prev = np.where((i >= 0) & (omp_keys[np.maximum(i, 0)] >= loc * n),
                    omp_keys[np.maximum(i, 0)] - loc * n, -1)
    rq, rc, rv, wsum, (bq, brow) = _interval_times(ctx, chunks, loc, prev, leave)
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
    prop = wsum[last]
    denom = dsum + prop
    scale = np.where(denom > 0, wait / np.where(denom > 0, denom, 1), 0.0)
    short_term = (loc[last[wk]], c, val * scale[wk])
    # per instance: (kind, last thread, members, waiting points in its interval);
    # a member is (barrier leave, waiting time, its delays as call paths and ticks,
    # their sum, the last thread's waiting time in between, None: OpenMP threads
    # all meet at every barrier)
    d_bounds = np.searchsorted(wk, np.arange(len(t) + 1))  # wk is sorted
    p_bounds = np.searchsorted(bq, np.arange(len(t) + 1))  # so is bq
    i_bounds = np.concatenate((np.nonzero(np.diff(inst))[0] + 1, [len(inst)]))
    leave_l, wait_l, dsum_l, prop_l = leave.tolist(), wait.tolist(), dsum.tolist(), prop.tolist()
    last_l, loc_l = last.tolist(), loc.tolist()
    instances = []
    lo = 0
    for hi in i_bounds.tolist():
        members = [(leave_l[j], wait_l[j], c[d_bounds[j]:d_bounds[j + 1]],
                    val[d_bounds[j]:d_bounds[j + 1]], dsum_l[j], prop_l[j], None)
                   for j in range(lo, hi)]
        j_last = last_l[lo]
        # one location's points, already in event order
        rows = brow[p_bounds[j_last]:p_bounds[j_last + 1]].tolist()
        instances.append((OMP_BARRIER, loc_l[j_last], members, rows))
        lo = hi
    return short_term, instances


def _omp_idle_delays(ctx, chunks):
    """Short-term delay costs of idle worker threads (Scalasca's OpenMP idleness
    delay): the master's time outside parallel regions, from a team's join to the
    next fork (or the end), per call path without the waiting time at the points in
    between, times the number of worker threads left idle: (location, cnode, float
    ticks) on the master; and the long-term cost this puts on the waits in between,
    as (point row, float ticks): the workers idle while the master waits too, so
    each such wait costs its waiting time times the idle workers."""
    omp_keys = sync_points(ctx)[6]
    e = np.empty(0, np.int64)
    empty = ((e, e, np.empty(0)), (e, np.empty(0)))
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
    # long-term: the workers also idle while the master waits in between, so each
    # such wait carries the idle workers as its cost (Scalasca's idleness scale)
    hit = scale[bq] > 0
    return (loc[qq], cc, val * scale[qq]), (brow[hit], scale[bq[hit]] * p["wait"][brow[hit]])


def _collective_inputs(kind, src):
    """What enters a collective wait state (an MPI collective or an OpenMP barrier)
    of `kind` as the amount to explain, for the long-term costs of source `src`:
    the cost that later wait states of that source put on each member, and the
    members' own waiting time when the collective is of that source's kind.

    Scalasca's OpenMP barrier is the exception: its long-term costs take only the
    barrier's own waiting time there, never the cost arriving from later wait
    states (its OpenMP barrier long-term pattern has no input at OpenMP barriers),
    while the costs of every other source do pass through OpenMP barriers."""
    if kind == OMP_BARRIER:
        return ("wait",) if src == OMP_BARRIER else ("cost",)
    return ("cost", "wait") if src == kind else ("cost",)


def _long_term_costs(ctx, p, waits, collectives=(), idle_costs=None):
    """Long-term delay costs (Scalasca's backward replay): the waiting time a wait
    state propagates to later ones is a cost that flows back to the wait states in
    its late side's interval, and from there to the delays that caused them.  Wait
    states are taken latest first, so that the cost arriving at each is complete
    when it is passed on.  Costs are tracked per kind of wait state they stem from
    (point-to-point and collective wait states, OpenMP barriers and idle threads).

    `collectives` are MPI collective and OpenMP barrier instances: on a hybrid
    trace the costs of MPI wait states reach the master's OpenMP barrier waits
    and go on from there to the thread that was last at the barrier.
    `idle_costs` (point rows, float ticks) are the costs idle OpenMP workers put
    on the master's waits outside parallel regions; they depend on nothing later,
    so they are there from the start."""
    sources = ["ls", "lr", COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21, OMP_BARRIER, OMP_IDLE]
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
    if idle_costs is not None:
        idle = costs[OMP_IDLE]
        for r, v in zip(*(x.tolist() for x in idle_costs)):
            idle[p_event[r]] = idle.get(p_event[r], 0.0) + v

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
            inputs = [(what, [costs[src].get(m[0], 0.0) for m in members] if what == "cost"
                       else [m[1] for m in members]) for what in _collective_inputs(kind, src)]
            for what, inp in inputs:
                if not any(inp):  # most instances carry no cost of most sources
                    continue
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
        omp_instances, idle_costs = [], None
        if len(sync_points(ctx)[6]):
            chunks = _chunks(ctx)
            short_term, omp_instances = _omp_barrier_delays(ctx, chunks)
            out[OMP_BARRIER] = to_ticks(ctx.n_locations, *short_term)
            short_term, idle_costs = _omp_idle_delays(ctx, chunks)
            out[OMP_IDLE] = to_ticks(ctx.n_locations, *short_term)
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
        out.update(_long_term_costs(ctx, p, long_term, coll_instances + omp_instances,
                                    idle_costs))
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
        for kind in (COLL_BARRIER, COLL_NXN, COLL_12N, COLL_N21, OMP_BARRIER, OMP_IDLE,
                     "ls", "lr", "longterm_%d" % COLL_BARRIER, "longterm_%d" % COLL_NXN,
                     "longterm_%d" % COLL_12N, "longterm_%d" % COLL_N21,
                     "longterm_" + OMP_BARRIER, "longterm_" + OMP_IDLE,
                     "indirect_ls", "indirect_lr", "propagating_ls", "propagating_lr",
                     "longterm_ls", "longterm_lr"):
            out.setdefault(kind, (e, e, e))
        return out
    return ctx.memo("delay_costs", compute)


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


class DelayOmpBarrierLongTerm(_Delay):
    name, title = "delay_ompbarrier_longterm", "OpenMP barrier delay costs (long-term)"
    kind = "longterm_" + OMP_BARRIER
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
    kind = "longterm_" + OMP_IDLE
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
    kind, cube_id, explains = "longterm_%d" % COLL_BARRIER, "delay_barrier_longterm", "wait_at_barrier"
    description = "The call paths whose delays cause waiting at MPI barriers indirectly." + _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE


class DelayNxNLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_n2n_longterm", "N x N delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_NXN, "delay_n2n_longterm", "wait_at_nxn"
    description = "The call paths whose delays cause waiting at N x N collectives indirectly." + _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE


class Delay12NLongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_12n_longterm", "1-to-N delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_12N, "delay_12n_longterm", "late_broadcast"
    description = "The call paths whose delays cause waiting at broadcasts indirectly." + _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE


class DelayN21LongTerm(_DelayCollectiveLongTerm):
    name, title = "delay_n21_longterm", "N-to-1 delay costs (long-term)"
    kind, cube_id, explains = "longterm_%d" % COLL_N21, "delay_n21_longterm", "early_reduce"
    description = "The call paths whose delays cause waiting at reductions indirectly." + _THROUGH_OMP_BARRIERS + _OMP_CROSSING_RULE


class DelayLateSenderLongTerm(_Delay):
    name, title = "delay_latesender_longterm", "Late Sender delay costs (long-term)"
    kind = "longterm_ls"
    cube_id = "delay_latesender_longterm"
    explains = "late_sender"
    description = ("The call paths whose delays cause Late Sender waits indirectly: waiting "
                   "time that propagated through other wait states (the indirect part of Late "
                   "Sender) traced back to the delays at its origin." + _THROUGH_OMP_BARRIERS)
    diagnosis = ("Delays with far-reaching effects: an imbalance here spreads along the "
                 "communication chain. Fix it, or decouple with non-blocking communication.")


class DelayLateReceiverLongTerm(_Delay):
    name, title = "delay_latereceiver_longterm", "Late Receiver delay costs (long-term)"
    kind = "longterm_lr"
    cube_id = "delay_latereceiver_longterm"
    explains = "late_receiver"
    description = ("The call paths whose delays cause Late Receiver waits indirectly, through "
                   "other wait states." + _THROUGH_OMP_BARRIERS)
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
