"""Synchronisation points of the root-cause analysis: the events where two or
more locations are known to meet (a Late Sender's receive and its send, a Late
Receiver's send completion and the receive's posting, MPI collectives where
someone waits, OpenMP parallel region entries and team barriers, the leaves of
MPI_Init and MPI_Finalize), each with its waiting time, its call's duration and
its completion time."""
from dataclasses import dataclass
from typing import List

import numpy as np

from ..groups import group_max, group_min
from ..mpi_p2p import _request_half
from .kinds import DelayKind
from .parts import numbering, parts_of

_NONE = np.iinfo(np.int64).min


@dataclass
class Points:
    """The synchronisation points, one row each, ascending by event."""
    event: np.ndarray     # int64
    location: np.ndarray  # int64
    wait: np.ndarray      # float64: the waiting time at the point
    cut: np.ndarray       # float64: its call's time before its completion
    cnode: np.ndarray     # int64: its call path, -1 outside every region

    def __len__(self):
        return len(self.event)

    def rows_of(self, events: np.ndarray) -> np.ndarray:
        """The row of each event among the points, -1 where it is none."""
        if not len(self.event):
            return np.full(len(events), -1, dtype=np.int64)
        row = np.minimum(np.searchsorted(self.event, events), len(self.event) - 1)
        return np.ascontiguousarray(np.where(self.event[row] == events, row, -1), np.int64)

    def wait_at(self, events: np.ndarray) -> np.ndarray:
        """The waiting time at each event: its point's, 0.0 where it is none."""
        if not len(self.event):
            return np.zeros(len(events))
        row = np.minimum(np.searchsorted(self.event, events), len(self.event) - 1)
        return np.where(self.event[row] == events, self.wait[row], 0.0)


@dataclass
class MessageWaits:
    """Late Sender or Late Receiver wait states as pairs of points: the waiter's
    (a Late Sender's receive, a Late Receiver's send completion) and the
    delayer's (the send, the receive's posting event), with the waiting time."""
    waiter: np.ndarray   # int64 events
    delayer: np.ndarray  # int64 events
    wait: np.ndarray     # float64


@dataclass
class CollectiveWaits:
    """Wait states at MPI collectives, one row per member that synchronises:
    its event, who it waits for (the delayer; itself for the delayer's own
    row), the kind of collective, its instance and communicator."""
    event: np.ndarray
    location: np.ndarray
    delayer: np.ndarray
    delayer_location: np.ndarray
    kind: np.ndarray      # int8: DelayKind values (COLLECTIVE_KINDS)
    instance: np.ndarray  # int32 where they fit, as location, delayer_location, comm
    comm: np.ndarray


@dataclass
class GroupPoints:
    """Points where everybody in a set of locations meets everybody."""
    members: np.ndarray  # bool per location
    keys: np.ndarray     # sorted location * (events + 1) + event


@dataclass
class SyncPoints:
    """Every synchronisation point, and the wait states at them."""
    points: Points
    #: the points two locations share one by one, as sorted keys
    #: (location * (locations + 1) + partner) * (events + 1) + event
    pair_keys: np.ndarray
    #: the group points, per communicator (or every MPI process)
    groups: List[GroupPoints]
    late_sender: MessageWaits
    late_receiver: MessageWaits
    collective_waits: CollectiveWaits
    #: the OpenMP points of every thread, as sorted keys location * (events + 1) + event
    omp_keys: np.ndarray


#: the wait states and instances every root-cause property reads (`reads`: the
#: analysis evaluates them first and keeps them until the root causes are done)
READS = ("late_sender", "late_receiver", "mpi_collectives", "omp_barriers")


def _leave_times(ctx, calls: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Leave time of each call (ENTER ids), once per distinct call; inside: an
    event of each call (a receive, a send, a request's completion), after which
    its LEAVE is looked for first (the latest of a call's: the closest)."""
    if not len(calls):
        return np.empty(0, np.int64)
    u, which = np.unique(calls, return_inverse=True)
    after = u.copy()
    np.maximum.at(after, which, inside)
    leave = ctx.leave_of(u, inside=after)
    return np.where(leave >= 0, ctx.time_of(np.maximum(leave, 0)), _NONE)[which]


class _Rows:
    """Columns appended in pieces: synchronisation points and their partners."""

    def __init__(self):
        self.parts = []

    @staticmethod
    def _dtype(name):
        return np.float64 if name in ("wait", "total", "compl") else np.int64

    def add(self, **cols):
        n = len(next(iter(cols.values())))
        if n:
            # views where the dtype already fits (a constant stays one value): the
            # pieces are copied once, by columns()
            self.parts.append({k: np.broadcast_to(np.asarray(v, dtype=self._dtype(k)), (n,))
                               for k, v in cols.items()})

    def columns(self, names):
        """The columns, each concatenated once; the pieces are let go of column by
        column (so this is called once)."""
        out = {}
        for k in names:
            out[k] = (np.concatenate([p.pop(k) for p in self.parts]) if self.parts
                      else np.empty(0, self._dtype(k)))
        return out


#: the columns of the point-to-point wait states (_p2p_waits) and the events of
#: each: "order" is what orders the wait states (Late Senders by their receive
#: call, Late Receivers by their receive, as the properties list them)
P2P_EVENTS = {"ls": ("recv", "send"), "lr": ("cmp", "req")}
P2P_TIMES = {"ls": ("r_total", "r_compl", "s_total", "s_compl"),
             "lr": ("c_total", "c_compl", "q_total", "q_compl")}


def _p2p_waits(ctx):
    """The Late Sender and Late Receiver wait states as synchronisation points:
    (ls, lr) dicts of arrays, each with the waiter's and the delayer's event, the
    waiting time and each side's call time and completion.

    For a part of a trace analysed in parts: those its own locations wait at
    (the waiting side's part decides a wait state: it holds the waiting call
    whole), and those its locations delay, which the waiting side's part sent
    (p2p_waits_out), in the order of the whole trace."""
    parts = parts_of(ctx)
    if parts is None:
        return _detected_p2p_waits(ctx)
    own, got = ctx.memo("rc_p2p_own", lambda: _own_p2p_waits(ctx, parts)), \
        ctx.memo("rc_p2p_received", _not_exchanged)
    # read once, here, for the point table (its memo keeps what comes of them):
    # kept, they would stay through the root causes' peak
    ctx.forget("rc_p2p_own", "rc_p2p_received")
    out = []
    for kind, mine, theirs in (("ls", own[0], got[0]), ("lr", own[1], got[1])):
        t, l, p = (np.concatenate((mine["order"][i], theirs["order"][i])) for i in range(3))
        order = np.lexsort((p, l, t))
        out.append({k: np.concatenate((mine[k], theirs[k]))[order]
                    for k in P2P_EVENTS[kind] + ("wait",) + P2P_TIMES[kind]})
    return out[0], out[1]


def _not_exchanged():
    raise RuntimeError("the wait states of other parts' locations are exchanged first "
                       "(rootcause.parts.prepare)")


def _own_p2p_waits(ctx, parts):
    """The point-to-point wait states of this part's own locations, with the
    (time, location, position) of the event that orders them."""
    ls, lr = _detected_p2p_waits(ctx, with_order=True)
    out = []
    for kind, w in (("ls", ls), ("lr", lr)):
        waiter = w[P2P_EVENTS[kind][0]]
        keep = parts.own[ctx.events.location[waiter]]
        w = {k: v[keep] for k, v in w.items()}
        t, l, pos = parts.part.keys(w.pop("order"))
        w["order"] = (np.asarray(t, np.int64), np.asarray(l, np.int64), np.asarray(pos, np.int64))
        out.append(w)
    return out[0], out[1]


def p2p_waits_out(ctx, parts) -> list:
    """Per part, what this part sends it of the point-to-point wait states its
    own locations wait at: those the part's locations delay (events as event
    keys); a step of parts.prepare, with p2p_waits_received."""
    part = parts.part
    loc = ctx.events.location
    own = ctx.memo("rc_p2p_own", lambda: _own_p2p_waits(ctx, parts))
    out = [{"ls": None, "lr": None} for _ in range(parts.size)]
    for i, kind in enumerate(("ls", "lr")):
        w = own[i]
        waiter, delayer = (w[k] for k in P2P_EVENTS[kind])
        dest = parts.part_of[loc[delayer]]
        for q in np.unique(dest[~parts.own[loc[delayer]]]).tolist():
            sel = dest == q
            row = {k: w[k][sel] for k in ("wait",) + P2P_TIMES[kind]}
            row.update({k: part.event_keys(w[k][sel]) for k in P2P_EVENTS[kind]})
            row["order"] = tuple(x[sel] for x in w["order"])
            out[q][kind] = row
    return out


def p2p_waits_received(ctx, parts, got: list) -> None:
    """Keeps what every part sent here (p2p_waits_out) for _p2p_waits."""
    part = parts.part
    received = []
    for kind in ("ls", "lr"):
        rows = [g[kind] for g in got if g is not None and g[kind] is not None]
        names = P2P_EVENTS[kind] + ("wait",) + P2P_TIMES[kind]
        merged = {k: (np.concatenate([r[k] for r in rows]) if rows else
                      np.empty(0, np.float64 if k not in P2P_EVENTS[kind] else np.int64))
                  for k in names}
        for k in P2P_EVENTS[kind]:
            ids = part.ids_of_keys(merged[k])
            if (ids < 0).any():
                raise RuntimeError("a wait state another part sent names an event this part "
                                   "does not hold")
            merged[k] = ids
        merged["order"] = tuple(np.concatenate([r["order"][i] for r in rows]) if rows else
                                np.empty(0, np.int64) for i in range(3))
        received.append(merged)
    ctx.memo("rc_p2p_received", lambda: (received[0], received[1]))


def _detected_p2p_waits(ctx, with_order: bool = False):
    """The point-to-point wait states the properties found in this trace (or
    part), as _p2p_waits gives them; with_order: with the event that orders
    them."""
    ls = ctx.published["late_sender"]
    rcall, scall = ls["recv_call"], ls["send_call"]
    r_leave = _leave_times(ctx, rcall, ls["recv"])
    s_leave = _leave_times(ctx, scall, ls["send"])
    # Scalasca's waiting time: the send's enter, but not after the receive's leave
    idle = np.minimum(ctx.time_of(scall), r_leave) - ctx.time_of(rcall)
    keep = idle > 0
    out_ls = {"recv": ls["recv"][keep], "send": ls["send"][keep], "wait": idle[keep],
              "r_total": (r_leave - ctx.time_of(rcall))[keep],
              "r_compl": np.maximum(r_leave - s_leave, 0)[keep],
              "s_total": (s_leave - ctx.time_of(scall))[keep],
              "s_compl": np.maximum(s_leave - r_leave, 0)[keep]}
    if with_order:
        out_ls["order"] = rcall[keep]
    lr = ctx.published["late_receiver"]
    send, recv, ccall = lr["send"], lr["recv"], lr["send_completion"]
    cmp_ev = _request_half(ctx, send, "MPI_ISEND")
    req_ev = _request_half(ctx, recv, "MPI_IRECV")
    qcall = ctx.enter_of(req_ev)
    c_leave = _leave_times(ctx, ccall, cmp_ev)
    q_leave = _leave_times(ctx, qcall, req_ev)
    out_lr = {"cmp": cmp_ev, "req": req_ev, "wait": lr.severity.astype(np.float64),
              "c_total": c_leave - ctx.time_of(ccall),
              "c_compl": np.where(c_leave > q_leave, 0, c_leave - q_leave),
              "q_total": q_leave - ctx.time_of(qcall),
              "q_compl": np.maximum(q_leave - c_leave, 0)}
    if with_order:
        out_lr["order"] = recv
    return out_ls, out_lr


def _collective_points(ctx, points: _Rows, partners: _Rows, groups: _Rows, delays: _Rows):
    """Synchronisation points of the MPI collectives, as Scalasca finds them."""
    from earlc.analysis import regions as rc

    coll = ctx.published["mpi_collectives"]
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
    row = ev.ref_of(end)
    sent = c.sent[row].view(np.int64)
    received = c.received[row].view(np.int64)
    _, which, count = np.unique(inst, return_inverse=True, return_counts=True)
    ok = count[which] > 1  # the rows of instances with more than one member
    del which, count
    is_root = loc == coll["root"]
    big = np.iinfo(np.int64).max

    comm_of = ctx.states.coll_comm[inst].astype(np.int64)
    rows = np.arange(len(b), dtype=np.int64)
    nrows = np.int64(len(b) + 1)
    # MPI_MAXLOC's order among a collective's rows: communicator rank, then row
    rank_key = np.maximum(coll["rank"], 0) * nrows + rows

    def lowest_rank(mask):
        """Per row: the row of lowest communicator rank among the masked rows of its
        instance (MPI_MAXLOC's choice among equal times); len(b) when none."""
        v = group_min(inst, np.where(mask, rank_key, big))
        return np.where(v < big, v % nrows, len(b))

    def delayed(sel, delayer, kind):
        """The members sel wait for the member `delayer` (row per row)."""
        idx = np.nonzero(sel & (delayer < len(b)))[0]
        d = delayer[idx]
        delays.add(event=end[idx], loc=loc[idx], delayer=end[d], delayer_loc=loc[d],
                   kind=np.full(len(idx), int(kind)), instance=inst[idx], comm=comm_of[idx])

    def record(sel, latest, earliest_end, partner_rows=None):
        """Members sel (bool) are synchronisation points; partner_rows: for each
        member row, the rows it synchronises with (pairs of row indices), or None:
        with every member of its communicator (a group point)."""
        idx = np.nonzero(sel)[0]  # computed on the members only, not every row
        b_i, e_i = b[idx], e[idx]
        lb = np.minimum(latest[idx], e_i)
        points.add(event=end[idx], loc=loc[idx], wait=np.maximum(lb - b_i, 0), total=total[idx],
                   compl=np.maximum(e_i - np.maximum(earliest_end[idx], lb), 0))
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

    # barriers: everybody synchronises
    barrier = ok & (op == rc.OP_BARRIER)
    if barrier.any():
        latest = group_max(inst, np.where(barrier, b, _NONE))
        first_end = group_min(inst, np.where(barrier, e, big))
        record(barrier, latest, first_end)
        delayed(barrier, lowest_rank(barrier & (b == latest)), DelayKind.BARRIER)
        del latest, first_end  # every kind's block lets go of its full-length columns
    # N x N (not Alltoallv/w): full overlap, or the receivers overlapping the latest sender
    nxn = ok & np.isin(op, [rc.OP_ALLGATHER, rc.OP_ALLGATHERV, rc.OP_ALLTOALL, rc.OP_ALLREDUCE,
                            rc.OP_REDUCE_SCATTER, rc.OP_REDUCE_SCATTER_BLOCK])
    payload = group_max(inst, ((sent != 0) | (received != 0)).astype(np.int64)) > 0
    nxn &= payload
    del payload
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
        delayed(sync, delayer, DelayKind.NXN)
        del (latest_all, first_end_all, full, s_begin, latest_s, is_latest, first_latest, sync,
             latest, first_end, part, delayer)
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
        delayed(sync, lowest_rank(one & is_root), DelayKind.ONE_TO_N)
        del waits, first_end, root, sync
    del one, root_b, root_pay
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
        delayed(sync, first_latest, DelayKind.N_TO_ONE)


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
    b = ctx.published["omp_barriers"]
    leave = b["leave"] if len(b) else none
    if len(b):
        wait = group_max(b["instance"], b["enter_time"]) - b["enter_time"]
        points.add(event=leave, loc=loc[leave], wait=wait,
                   total=ctx.time_of(leave) - b["enter_time"], compl=0.0)
    n = np.int64(ctx.n_events + 1)
    ev = np.concatenate((enters, leave))
    return np.sort(loc[ev].astype(np.int64) * n + ev)


def _narrow(a: np.ndarray) -> np.ndarray:
    """a as int32 where its values fit, else as it is (int64)."""
    i32 = np.iinfo(np.int32)
    if not len(a) or (int(a.min()) >= i32.min and int(a.max()) <= i32.max):
        return a.astype(np.int32)
    return a


def _point_table(ctx) -> dict:
    """The synchronisation points and what sync_points makes of them, but the
    members of the group of every MPI process (mpi_locations)."""
    def compute():
        ev = ctx.events
        ls, lr = _p2p_waits(ctx)
        points, partners, groups, coll_waits = _Rows(), _Rows(), _Rows(), _Rows()
        loc = ev.location
        # the forward replay's points first: the first record of an event wins; the
        # waits' call times and completions serve only here
        points.add(event=ls["recv"], loc=loc[ls["recv"]], wait=ls["wait"],
                   total=ls.pop("r_total"), compl=ls.pop("r_compl"))
        partners.add(event=ls["recv"], partner=loc[ls["send"]])
        _collective_points(ctx, points, partners, groups, coll_waits)
        _init_finalize_points(ctx, points, groups)
        points.add(event=lr["cmp"], loc=loc[lr["cmp"]], wait=lr["wait"],
                   total=lr.pop("c_total"), compl=lr.pop("c_compl"))
        partners.add(event=lr["cmp"], partner=loc[lr["req"]])
        points.add(event=ls["send"], loc=loc[ls["send"]], wait=0.0, total=ls.pop("s_total"),
                   compl=ls.pop("s_compl"))
        partners.add(event=ls["send"], partner=loc[ls["recv"]])
        points.add(event=lr["req"], loc=loc[lr["req"]], wait=0.0, total=lr.pop("q_total"),
                   compl=lr.pop("q_compl"))
        partners.add(event=lr["req"], partner=loc[lr["cmp"]])
        # OpenMP points: their waiting time, between the MPI points, propagates too
        omp_keys = _omp_points(ctx, points)
        p = points.columns(("event", "loc", "wait", "total", "compl"))
        _, first = np.unique(p["event"], return_index=True)  # sorted by event, first wins
        p = {k: v[first] for k, v in p.items()}
        # what the intervals need of a call's time: the part before its completion
        cut = p.pop("total") - p.pop("compl")
        table = Points(event=p["event"], location=p["loc"], wait=p["wait"], cut=cut,
                       cnode=numbering(ctx).cnode[p["event"]].astype(np.int64))
        del p, cut
        q = partners.columns(("event", "partner"))
        L = np.int64(ctx.n_locations + 1)
        n = np.int64(ctx.n_events + 1)
        key = np.sort((ev.location[q["event"]].astype(np.int64) * L + q["partner"]) * n
                      + q["event"])
        cw = coll_waits.columns(("event", "loc", "delayer", "delayer_loc", "kind", "instance",
                                 "comm"))
        # held through the root causes' peak: the columns whose values fit in
        # fewer bytes take fewer (the events stay 8 bytes: they index the trace)
        cw["kind"] = cw["kind"].astype(np.int8)
        for k in ("loc", "delayer_loc", "instance", "comm"):
            cw[k] = _narrow(cw[k])
        return {"table": table, "pair_keys": key,
                "groups": groups.columns(("event", "group")), "ls": ls, "lr": lr, "cw": cw,
                "omp_keys": omp_keys}
    return ctx.memo("rc_point_table", compute)


def mpi_locations(ctx) -> np.ndarray:
    """The locations with synchronisation points: the members of the group
    points of every MPI process (MPI_Init, MPI_Finalize).  For a part of a
    trace analysed in parts, the whole trace's (found by the parts together
    first: parts.prepare)."""
    def compute():
        if parts_of(ctx) is not None:
            raise RuntimeError("the locations with synchronisation points are found by the "
                               "parts together first (rootcause.parts.prepare)")
        return own_point_locations(ctx)
    return ctx.memo("rc_mpi_locations", compute)


def own_point_locations(ctx) -> np.ndarray:
    """The locations with synchronisation points among this trace's events."""
    table = _point_table(ctx)["table"]
    return (np.unique(ctx.events.location[table.event]).astype(np.int64) if len(table.event)
            else np.empty(0, np.int64))


def sync_points(ctx) -> SyncPoints:
    """Every synchronisation point and the wait states at them, computed once per
    analysis."""
    def compute():
        ev = ctx.events
        t = _point_table(ctx)
        table, ls, lr, cw, g = t["table"], t["ls"], t["lr"], t["cw"], t["groups"]
        # the waiting times as floats in place of the ticks (one copy held, not two)
        ls["wait"] = ls["wait"].astype(np.float64, copy=False)
        n = np.int64(ctx.n_events + 1)
        # group points: per communicator (-1: every MPI process), its members and
        # the sorted (location, event) keys of its points
        group_points = []
        for gid in np.unique(g["group"]).tolist():
            sel = g["event"][g["group"] == gid]
            members = np.zeros(ctx.n_locations + 1, dtype=bool)
            if gid < 0:
                members[mpi_locations(ctx)] = True
            else:
                cm = ctx.trace.communicators.get(int(gid))
                locs = np.asarray(cm.locations if cm is not None else [], dtype=np.int64)
                members[locs[locs >= 0]] = True
            group_points.append(GroupPoints(
                members, np.sort(ev.location[sel].astype(np.int64) * n + sel)))
        # the group points' rows are read here only: their keys above replace them
        del g
        t.pop("groups")
        return SyncPoints(
            points=table, pair_keys=t["pair_keys"], groups=group_points,
            late_sender=MessageWaits(ls["recv"], ls["send"], ls["wait"]),
            late_receiver=MessageWaits(lr["cmp"], lr["req"], lr["wait"]),
            collective_waits=CollectiveWaits(
                event=cw["event"], location=cw["loc"], delayer=cw["delayer"],
                delayer_location=cw["delayer_loc"], kind=cw["kind"], instance=cw["instance"],
                comm=cw["comm"]),
            omp_keys=t["omp_keys"])
    return ctx.memo("sync_points", compute)
