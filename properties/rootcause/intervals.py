"""Synchronisation intervals: the exclusive time per call path that a location
spends between two of its synchronisation points (counted at ENTER and LEAVE
events), without the waiting time at the points in between; the building block
of delay costs and of the critical path."""
import numpy as np

from earlc import _core

from .points import sync_points


def _chunks(ctx):
    """Exclusive time as Scalasca's replay counts it, in chunks at ENTER and LEAVE
    events: the time since the location's previous ENTER or LEAVE, charged at an
    ENTER to the caller and at a LEAVE to the region left.  The C core builds
    those of the events (a compact table, location by location); the thread
    management's corrections come as a table of extra chunks, sorted by key = 2 * (location * (n+1) + event) + 1 for time
    counted after a point at that event (at a LEAVE), + 0 before it (at an ENTER
    or a team's join).  Returns (event chunks, (key, cnode, ticks) of the extra
    chunks), as the C core's sums take them; built once per analysis (the delays
    and the critical path both read them)."""
    return ctx.memo("rc_chunks", lambda: _build_chunks(ctx))


def _build_chunks(ctx):
    ev = ctx.events
    kinds = ctx.kinds
    roles = np.zeros(256, dtype=np.uint8)
    roles[[kinds["ENTER"]]] = _core.RC_CHUNK_ENTER
    roles[[kinds["LEAVE"]]] = _core.RC_CHUNK_LEAVE
    # a team's join closes a stretch of the master's time (Scalasca's checkpoint)
    roles[[kinds["THREAD_JOIN"], kinds["OMP_JOIN"]]] = _core.RC_CHUNK_JOIN
    # PROGRAM_BEGIN and PROGRAM_END open and close the program's call path
    program = [c for c in ctx.calltree.extra_names]
    if program:
        roles[[kinds["PROGRAM_BEGIN"]]] = _core.RC_CHUNK_ENTER
        roles[[kinds["PROGRAM_END"]]] = _core.RC_CHUNK_PROGRAM_END
    events = _core.rc_event_chunks(
        ctx.n_locations, ev.location, ev.kind, ev.time,
        np.ascontiguousarray(ctx.cnode, dtype=np.int32),
        np.ascontiguousarray(ctx.calltree.parent, dtype=np.int32), roles.tobytes(),
        program[0] if program else -1)
    n = np.int64(ctx.n_events + 1)
    # thread management counts in the parallel region, as in the call tree: on
    # every thread the fork part after its ENTER; on the master it leaves the
    # forking call path (before the ENTER), and so does the join part
    enters, fork_part, join_part = ctx.thread_management()
    if not len(enters):
        empty = np.empty(0, np.int64)
        return events, (empty, empty, empty)
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
    key = np.concatenate(((la * n + ea) * 2 + 1, (mloc * n + e) * 2,
                          ((mloc * n + leave) * 2 + 1)[has], ((mloc * n + leave) * 2 + 1)[has]))
    cnode = np.concatenate((ca, pc, c[has], pc[has]))
    ticks = np.concatenate((fork_part[ok_all], -f, j[has], -j[has]))
    order = np.argsort(key, kind="stable")
    return events, (_i64(key[order]), _i64(cnode[order]), _i64(ticks[order]))


def _search(keys: np.ndarray, needles: np.ndarray, side: str = "left") -> np.ndarray:
    """np.searchsorted with the needles sorted first: far fewer cache misses on
    large key arrays."""
    if len(needles) < 1024:
        return np.searchsorted(keys, needles, side=side)
    order = np.argsort(needles, kind="stable")
    out = np.empty(len(needles), dtype=np.int64)
    out[order] = np.searchsorted(keys, needles[order], side=side)
    return out


class CallPathMap:
    """Per query, (cnode, value) entries ascending by cnode, in CSR form: the
    entries of query q are [offset[q], offset[q + 1])."""

    def __init__(self, offset, cnode, value):
        """From numpy arrays, or from the C core's buffers (viewed, not copied)."""
        self.offset = _view(offset, np.int64)
        self.cnode = _view(cnode, np.int64)
        self.value = _view(value, np.float64)

    @property
    def query(self) -> np.ndarray:
        """The query of each entry."""
        return np.repeat(np.arange(len(self.offset) - 1, dtype=np.int64), np.diff(self.offset))

    def columns(self):
        """(query, cnode, value) of every entry."""
        return self.query, self.cnode, self.value

    def arrays(self):
        """(offset, cnode, value) as the C core takes a map."""
        return _i64(self.offset), _i64(self.cnode), _f64(self.value)


def _gather(offset: np.ndarray, queries, *columns):
    """The segments [offset[q], offset[q + 1]) of the columns for the given
    queries, in that order: (new offsets, [gathered column, ...])."""
    queries = np.asarray(queries, dtype=np.int64)
    lo = offset[queries]
    n = offset[queries + 1] - lo
    new = np.concatenate(([0], np.cumsum(n))).astype(np.int64)
    entry = np.repeat(lo - new[:-1], n) + np.arange(new[-1], dtype=np.int64)
    return new, [c[entry] for c in columns]


def _concat_maps(a: CallPathMap, b: CallPathMap) -> CallPathMap:
    """One map with a's queries, then b's."""
    return CallPathMap(np.concatenate((a.offset, a.offset[-1] + b.offset[1:])),
                       np.concatenate((a.cnode, b.cnode)), np.concatenate((a.value, b.value)))


#: numpy.sum adds fewer values than this one by one, more pairwise
_NUMPY_SEQUENTIAL_SUM = 8


def _segment_sums(values: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """numpy.sum of each segment [offset[k], offset[k + 1]) of values, to the bit:
    short segments added one by one (as numpy.sum does; np.add.reduceat does
    not), column by column over a zero-padded table; long ones by numpy.sum."""
    size = np.diff(offset)
    short = np.nonzero(size < _NUMPY_SEQUENTIAL_SUM)[0]
    out = np.zeros(len(size))
    for i in range(_NUMPY_SEQUENTIAL_SUM - 1):
        has = short[size[short] > i]
        out[has] += values[offset[has] + i]
    for k in np.nonzero(size >= _NUMPY_SEQUENTIAL_SUM)[0].tolist():
        out[k] = values[offset[k]:offset[k + 1]].sum()
    return out


class Intervals:
    """Synchronisation intervals of a list of queries: their time map
    (`time`), the waiting time at the synchronisation points in between per
    query (`wait_sum`), and those points with waiting time (`between_query`,
    `between_row`: rows of the synchronisation points, in event order)."""

    def __init__(self, time, wait_sum, between_offset, between_row):
        self.time = time
        self.wait_sum = wait_sum
        self.between_offset = between_offset
        self.between_row = between_row

    @property
    def between_query(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.between_offset) - 1, dtype=np.int64),
                         np.diff(self.between_offset))


def _points_by_location(ctx):
    """The synchronisation points as the C core reads them: sorted by
    (location, event), with their rows in sync_points' table."""
    def compute():
        p = sync_points(ctx)[0]
        n = np.int64(ctx.n_events + 1)
        key = p["loc"] * n + p["event"]
        # the points are sorted by event: a stable sort by location finishes the
        # job, and numpy sorts 16-bit keys stably by radix
        loc = p["loc"].astype(np.uint16) if ctx.n_locations < 1 << 16 else p["loc"]
        order = np.argsort(loc, kind="stable")
        return (np.ascontiguousarray(key[order]), order.astype(np.int64, copy=False),
                np.ascontiguousarray(p["cnode"][order]),
                np.ascontiguousarray(p["wait"][order], dtype=np.float64),
                np.ascontiguousarray(p["cut"][order], dtype=np.float64))
    return ctx.memo("rc_points_by_location", compute)


def _view(a, dtype) -> np.ndarray:
    return a if isinstance(a, np.ndarray) else np.frombuffer(a, dtype)


def _i64(a):
    return np.ascontiguousarray(a, dtype=np.int64)


def _f64(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def _interval_times(ctx, chunks, loc, prev, at) -> Intervals:
    """Per query (location, previous synchronisation point or -1, synchronisation
    point): Scalasca's pruned time map of the interval (positive times only), and
    the waiting time at the synchronisation points strictly in between."""
    (tm_off, tm_c, tm_v), wsum, b_off, b_row = _core.rc_interval_times(
        chunks, *_points_by_location(ctx), ctx.n_events + 1, len(ctx.calltree) + 1,
        _i64(loc), _i64(prev), _i64(at))
    return Intervals(CallPathMap(tm_off, tm_c, tm_v), np.frombuffer(wsum, np.float64),
                     np.frombuffer(b_off, np.int64), np.frombuffer(b_row, np.int64))


def _excess(late: CallPathMap, late_q, early: CallPathMap, early_q, within=None, within_q=None):
    """Per pair k: the positive excess per call path of late's query late_q[k]
    over early's query early_q[k], restricted to the call paths of within's
    query within_q[k] when given: (map with one query per pair, sum per pair)."""
    (o, c, v), total = _core.rc_excess(
        late.arrays(), _i64(late_q), early.arrays(), _i64(early_q),
        within.arrays() if within is not None else None,
        _i64(within_q) if within is not None else None)
    return CallPathMap(o, c, v), np.frombuffer(total, np.float64)


def _pair_points(ctx):
    """The shared synchronisation points as the C core reads them: the pair keys,
    and per group point set its members and its points (CSR rows)."""
    def compute():
        _, pkeys, group_keys = sync_points(ctx)[:3]
        members = [np.nonzero(m)[0] for m, _ in group_keys]
        keys = [k for _, k in group_keys]
        def csr(rows):
            offset = np.concatenate(([0], np.cumsum([len(x) for x in rows]))).astype(np.int64)
            return offset, (_i64(np.concatenate(rows)) if rows else np.empty(0, np.int64))
        return (_i64(pkeys),) + csr(members) + csr(keys)
    return ctx.memo("rc_pair_points", compute)


def _previous_point(ctx, loc, partner, at):
    """Per query: the last synchronisation point of loc with partner before event
    `at` (-1 when none)."""
    pair_key, member_offset, member_location, key_offset, group_key = _pair_points(ctx)
    return np.frombuffer(_core.rc_previous_points(
        ctx.n_locations + 1, pair_key, member_offset, member_location, key_offset, group_key,
        ctx.n_events + 1, _i64(loc), _i64(partner), _i64(at)), np.int64)


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


def _group_interval_starts(ctx, cw):
    """Per collective wait instance (Scalasca's findPreviousMpiGroupSynchpoints):
    walking back from the delayer's point over its synchronisation points, the
    one where it last met every other member at once (or -1), and for members met
    one by one after that, the point where each was met last.  Returns (instance
    rows: the first row of each, the instance of each row; start per instance;
    (instance, member location, point) as three arrays)."""
    _, pkeys, group_keys = sync_points(ctx)[:3]
    point_key = _points_by_location(ctx)[0]
    n = np.int64(ctx.n_events + 1)
    L = np.int64(ctx.n_locations + 1)
    # the partners of each point one by one (as (point key, partner) pairs), and
    # the set it meets as a group
    partner_key = _i64((pkeys // n // L) * n + pkeys % n)
    partner_location = _i64((pkeys // n) % L)
    point_set = np.full(len(point_key), -1, dtype=np.int64)
    sets = []
    for members, keys in group_keys:
        point_set[np.searchsorted(point_key, keys)] = len(sets)  # a later group wins
        sets.append(np.nonzero(members)[0])
    # the members of each instance's communicator
    _, first, inst_of_row = np.unique(cw["instance"], return_index=True, return_inverse=True)
    comms = ctx.trace.communicators
    inst_comms, comm_of_inst = np.unique(cw["comm"][first], return_inverse=True)
    member_set = len(sets) + comm_of_inst.astype(np.int64)  # one set per communicator
    for comm in inst_comms.tolist():
        cm = comms.get(int(comm))
        locs = np.asarray(cm.locations if cm is not None else [], dtype=np.int64)
        sets.append(locs[locs >= 0])
    sizes = np.asarray([len(x) for x in sets], dtype=np.int64)
    set_offset = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    set_location = _i64(np.concatenate(sets)) if sets else np.empty(0, np.int64)
    start, m_inst, m_loc, m_ev = (np.frombuffer(x, np.int64) for x in _core.rc_group_starts(
        point_key, point_set, partner_key, partner_location, set_offset, set_location,
        ctx.n_locations + 1, n, _i64(cw["delayer_loc"][first]), _i64(cw["delayer"][first]),
        member_set))
    return (first, inst_of_row.astype(np.int64, copy=False)), start, (m_inst, m_loc, m_ev)


def _chunk_sums(ctx, chunks, loc, lo_ev, hi_ev) -> CallPathMap:
    """Raw exclusive time (float ticks) per query and call path between two events
    of a location (after lo_ev's point, before hi_ev's), as Scalasca's replay
    counts it."""
    o, c, v = _core.rc_chunk_sums(chunks, ctx.n_events + 1, len(ctx.calltree) + 1,
                                  _i64(loc), _i64(lo_ev), _i64(hi_ev))
    return CallPathMap(o, c, v)
