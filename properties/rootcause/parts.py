"""The root causes of a trace analysed in parts (earlc.parts): what crosses
parts, and how (docs/parallel.md, "Root causes and the critical path", and
its table of the steps for developers).

Every part runs the root causes on its own events and ghosts.  What a part
computes alone: the time chunks, synchronisation points and intervals of its
own locations, the group interval starts of the collectives its locations
delay, the OpenMP costs (a process's threads are in one part).  What crosses
parts goes through the part's Exchange, in collective steps that every part
takes in the same order (a local computation and one exchange each; a failure
of any part travels in the exchange instead of its data and ends every part
with the same error, as Exchange.agree does):

1. the call-path numbering (`numbering`): the whole trace's, so that every sum
   over call paths runs in the order of the single-process analysis;
2. the point-to-point wait states, decided by the waiting side's part, go to
   the late side's (points.py), and so do the waiting side's interval time
   maps (`to_late_side`: the late side computes the excess, the delays charged
   to its own call paths); the late side's share of each wait (the indirect
   part) comes back (`to_waiting_side`);
3. the long-term replay in rounds (replay_parts.py);
4. the critical path's graph, walked on one part, its stretches back to their
   owners (critical_parts.py); its sums over every location.

Events that cross parts are named by their event keys (Part.event_keys:
location and position in the whole trace), call paths by the whole trace's
numbering.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Callable, List, Optional

import numpy as np

#: what a part sends in place of its data when its step failed
_FAILED = b"\x00earlc-failed"


class Parts:
    """This part of a trace analysed in parts, as the root causes see it."""

    def __init__(self, part):
        self.part = part
        self.exchange = part.exchange
        self.rank = part.exchange.rank
        self.size = part.exchange.size
        #: per location: held whole by this part
        self.own = np.asarray(part.own, dtype=bool)
        #: per location: the part that holds it
        self.part_of = np.asarray(part.partition.part_of, dtype=np.int64)
        #: what the root causes exchanged, kept on the part (Part.stats): the bytes
        #: this part sent to others, the collective steps, the replay's rounds
        self.stats = part.stats.setdefault("rootcause", {"bytes_sent": 0, "steps": 0,
                                                         "replay_rounds": 0})

    # -- collective steps with the failures of any part --------------------------------
    #
    # Every step of the root causes in parts is an alltoall of bytes, so that a
    # part that fails anywhere can take part in the next step whatever it is:
    # it sends its failure there instead of data (tell), and every part raises
    # it (as Exchange.agree does).  `run` wraps a whole computation so.

    def _exchange(self, payload: List[bytes]) -> List[bytes]:
        self.stats["bytes_sent"] += sum(len(b) for i, b in enumerate(payload) if i != self.rank)
        self.stats["steps"] += 1
        return self.exchange.alltoall_bytes(payload)

    def _raise_failures(self, error, got: List[bytes]) -> None:
        from earlc.parts.exchange import PartsFailed

        for part, b in enumerate(got):
            if b.startswith(_FAILED):
                if part == self.rank and error is not None:
                    error._told = True
                    raise error
                kind, text = pickle.loads(b[len(_FAILED):])
                failure = PartsFailed(text, kind, part)
                failure._told = True
                raise failure

    @staticmethod
    def _failure(error) -> bytes:
        text = str(error)
        return _FAILED + pickle.dumps((type(error).__name__, text if text else
                                       type(error).__name__))

    def tell(self, error: BaseException) -> None:
        """Take part in the next step with this part's failure (once)."""
        if not getattr(error, "_told", False):
            error._told = True
            self._exchange([self._failure(error)] * self.size)

    def alltoall(self, compute: Callable[[], List[object]]) -> List[object]:
        """Collective: compute() gives one object per part (None: nothing);
        returns what every part sent here.  A part whose compute raises sends
        its failure instead, and every part raises it."""
        error = None
        try:
            out = compute()
            if len(out) != self.size:
                raise ValueError("a step sends to %d parts of %d" % (len(out), self.size))
            made = {}  # an object sent to several parts is pickled once

            def dumped(x):
                if id(x) not in made:
                    made[id(x)] = pickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL)
                return made[id(x)]
            payload = [b"" if x is None else dumped(x) for x in out]
        except Exception as exc:  # every part must learn of it
            error = exc
            payload = [self._failure(exc)] * self.size
        got = self._exchange(payload)
        if error is not None or any(b.startswith(_FAILED) for b in got):
            self._raise_failures(error, got)
        return [pickle.loads(b) if b else None for b in got]

    def allgather(self, compute: Callable[[], object]) -> List[object]:
        """Collective: every part's compute(), failures as in alltoall."""
        return self.alltoall(lambda: [compute()] * self.size)

    def together(self, *computes: Callable[[], List[object]]) -> List[List[object]]:
        """Collective, one step: several alltoalls whose computes read nothing
        another of them receives, sent at once; per compute, what every part
        sent here.  A step less for each compute after the first: under MPI a
        round trip, in turn a run of every part (earlc.parts.steps)."""
        def compute():
            outs = [c() for c in computes]
            for out in outs:
                if len(out) != self.size:
                    raise ValueError("a step sends to %d parts of %d" % (len(out), self.size))
            return [tuple(out[p] for out in outs) for p in range(self.size)]
        got = self.alltoall(compute)
        return [[None if g is None else g[i] for g in got] for i in range(len(computes))]

    def sum(self, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """Collective: the element-wise sum of every part's compute(), added in
        the order of the parts (exact for integers)."""
        every = self.allgather(lambda: np.asarray(compute()))
        total = every[0].copy()
        for x in every[1:]:
            if x.shape != total.shape:
                raise ValueError("parts disagree on the shape of a sum: %s, %s"
                                 % (total.shape, x.shape))
            total += x
        return total

    def run(self, compute: Callable[[], object]) -> object:
        """A computation of collective steps: a part that fails in its own work
        tells the others at their next step; a last step agrees that every part
        is done, so that no part is left waiting for one that failed after the
        others' last step."""
        try:
            result = compute()
        except BaseException as exc:
            self.tell(exc)
            raise
        self.allgather(lambda: None)
        return result

    def send_to_owners(self, location: np.ndarray, columns: dict) -> List[dict]:
        """Collective: the rows of `columns` (arrays of one length) go to the
        part of their `location`; returns the rows every part sent here, per
        part (dicts of arrays)."""
        def compute():
            dest = self.part_of[np.asarray(location, dtype=np.int64)]
            out = [None] * self.size
            for p in np.unique(dest).tolist():
                sel = np.nonzero(dest == p)[0]
                out[p] = {k: np.asarray(v)[sel] for k, v in columns.items()}
            return out
        got = self.alltoall(compute)
        return [g if g is not None else {k: np.empty(0, np.asarray(v).dtype)
                                         for k, v in columns.items()} for g in got]


    # -- the two sides of a wait state ------------------------------------------------
    def to_late_side(self, waiter: np.ndarray, late_loc: np.ndarray, mine_w: np.ndarray,
                     early, mine_d: np.ndarray):
        """Collective: the waiting side's interval time maps of the wait states
        delayed here (rows mine_d of a table of wait states with their waiting
        events and late locations), in that order.  `early` holds the maps of
        the rows waited here (a query per row of mine_w); those of rows whose
        late side is in another part go there, and the maps of the rows delayed
        here but waited elsewhere come from their waiting side's part."""
        from .arrays import gather_segments
        from .records import CallPathMap

        part = self.part
        away = np.nonzero(~self.own[late_loc[mine_w]])[0]

        def compute():
            dest = self.part_of[late_loc[mine_w[away]]]
            keys = part.event_keys(waiter[mine_w[away]])
            out = [None] * self.size
            for p in np.unique(dest).tolist():
                pick = dest == p
                off, (cn, val) = gather_segments(early.offset, away[pick], early.cnode,
                                                 early.value)
                out[p] = {"key": keys[pick], "size": np.diff(off), "cnode": cn, "value": val}
            return out
        got = [g for g in self.alltoall(compute) if g is not None]
        keys = _concat([g["key"] for g in got], np.int64)
        size = _concat([g["size"] for g in got], np.int64)
        received = CallPathMap(np.concatenate(([0], np.cumsum(size))).astype(np.int64),
                               _concat([g["cnode"] for g in got], np.int64),
                               _concat([g["value"] for g in got], np.float64))
        # per row delayed here: its query in early (waited here) or in received
        at = np.full(len(waiter), -1, dtype=np.int64)
        at[mine_w] = np.arange(len(mine_w))
        query = at[mine_d]
        other = np.nonzero(query < 0)[0]
        found = match_keys(keys, part.event_keys(waiter[mine_d[other]]))
        if (found < 0).any():
            raise RuntimeError("the waiting side's interval of %d wait states never arrived "
                               "from their part" % int((found < 0).sum()))
        query[other] = len(mine_w) + found
        both = early.followed_by(received)
        off, (cn, val) = gather_segments(both.offset, query, both.cnode, both.value)
        return CallPathMap(off, cn, val)

    def to_waiting_side(self, waiter: np.ndarray, waiter_loc: np.ndarray, mine_d: np.ndarray,
                        value: np.ndarray, mine_w: np.ndarray) -> np.ndarray:
        """Collective: a value per wait state that its late side's part computed
        (value: per row of mine_d), for the rows waited here (mine_w), in that
        order."""
        part = self.part
        away = np.nonzero(~self.own[waiter_loc[mine_d]])[0]
        got = self.send_to_owners(waiter_loc[mine_d[away]],
                                  {"key": part.event_keys(waiter[mine_d[away]]),
                                   "value": np.asarray(value, np.float64)[away]})
        keys = _concat([g["key"] for g in got], np.int64)
        values = _concat([g["value"] for g in got], np.float64)
        at = np.full(len(waiter), -1, dtype=np.int64)
        at[mine_d] = np.arange(len(mine_d))
        here = at[mine_w]
        out = np.zeros(len(mine_w))
        out[here >= 0] = np.asarray(value, np.float64)[here[here >= 0]]
        other = np.nonzero(here < 0)[0]
        found = match_keys(keys, part.event_keys(waiter[mine_w[other]]))
        if (found < 0).any():
            raise RuntimeError("the late side's share of %d wait states never arrived from "
                               "their part" % int((found < 0).sum()))
        out[other] = values[found]
        return out


def _concat(arrays, dtype) -> np.ndarray:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.empty(0, dtype)


def parts_of(ctx) -> Optional[Parts]:
    """The part of the trace analysed in parts that ctx holds, or None for a
    whole trace."""
    part = getattr(ctx.trace, "part", None)
    if part is None:
        return None
    return ctx.memo("rc_parts", lambda: Parts(part))


@dataclass
class Numbering:
    """The call paths as the root causes number them: the trace's own call tree,
    or for a part the whole trace's (parts/calltree.py), so that sums over call
    paths run in the single-process order.  `cnode` per event (-1 outside
    every region and at a part's ghosts; for a part a GlobalCnodes, indexed
    as the array), `parent` per call path, the
    program's node (-1: none), and per call path the part's own cnode
    (`to_local`, None: the same numbers)."""
    cnode: np.ndarray
    parent: np.ndarray
    program: int
    to_local: Optional[np.ndarray]

    @property
    def n(self) -> int:
        return len(self.parent)

    def local_rows(self, rows):
        """(cnode, location, value) rows in this numbering as the part's own
        call tree numbers them."""
        c, l, v = rows
        if self.to_local is None:
            return c, l, v
        c = self.to_local[np.asarray(c, dtype=np.int64)]
        if (c < 0).any():
            raise ValueError("a root-cause value on a call path this part never visits")
        return c, l, v


class GlobalCnodes:
    """The whole trace's call path of each event of a part (Numbering.cnode),
    looked up when asked rather than kept: the part's own call path of an
    event (`cnode`, which the part's call tree holds anyway) through
    `to_global` (its last entry, -1, for -1), -1 at ghosts.  Indexed as the
    array it stands for; the whole array (numpy.asarray) is made only for the
    time chunks and let go after: kept, it would hold 4 bytes per event of
    the part through the root causes' peak."""

    def __init__(self, cnode, to_global, location, own):
        self._cnode, self._to_global = cnode, to_global
        self._location, self._own = location, own

    def __len__(self):
        return len(self._cnode)

    def __getitem__(self, ids):
        out = self._to_global[self._cnode[ids]]
        return np.where(self._own[self._location[ids]], out, np.int32(-1))

    def __array__(self, dtype=None, copy=None):
        out = self._to_global[self._cnode]
        out[~self._own[self._location]] = -1
        return out if dtype is None else out.astype(dtype, copy=False)


def numbering(ctx) -> Numbering:
    """The root causes' call-path numbering (collective for a part, unless
    prepare made it)."""
    def compute():
        ct = ctx.calltree
        parts = parts_of(ctx)
        program = min(ct.extra_names) if ct.extra_names else -1
        if parts is None:
            return Numbering(ctx.cnode, ct.parent, program, None)
        local = {}
        every = parts.allgather(lambda: _numbering_mine(ctx, parts, local))
        return _numbering_of(ctx, parts, every, local)
    return ctx.memo("rc_numbering", compute)


def _numbering_mine(ctx, parts: Parts, local: dict):
    """What a part sends every part for the numbering: its call paths' keys
    and first own events, its program's node (keeps its keys in local)."""
    from earlc.parts.calltree import first_visits, path_keys, program_of

    ct = ctx.calltree
    keys = path_keys(ct)
    cnodes, first = first_visits(parts.part, ct, keys)
    prog, roots = program_of(ct, keys)
    local["keys"] = keys
    return [keys[c] for c in cnodes.tolist()], parts.part.keys(first), prog, roots


def _numbering_of(ctx, parts: Parts, every: list, local: dict) -> Numbering:
    """The numbering from what every part sent (_numbering_mine)."""
    from earlc.parts.calltree import order_paths

    tree = order_paths([(k, np.arange(len(k)), f, p, r) for k, f, p, r in every])
    to_global = tree.local_to_global(local["keys"])
    # a ghost's call path in the part is not its own: none, so that its events
    # give no time chunks (its time is its owner's)
    cnode = GlobalCnodes(ctx.cnode, np.append(to_global, -1).astype(np.int32),
                         ctx.events.location, parts.own)
    to_local = np.full(len(tree.parents), -1, dtype=np.int64)
    known = to_global >= 0
    to_local[to_global[known]] = np.nonzero(known)[0]
    return Numbering(cnode, tree.parents, tree.program if tree.program is not None else -1,
                     to_local)


def prepare(ctx) -> Optional[Parts]:
    """Collective for a part (the first steps of every root-cause computation
    in parts, once): the call-path numbering, the point-to-point wait states
    to the parts of their late sides, and the locations with synchronisation
    points of the whole trace (points.mpi_locations).  The part, or None for a
    whole trace."""
    parts = parts_of(ctx)
    if parts is not None:
        ctx.memo("rc_prepared", lambda: _prepare(ctx, parts))
    return parts


def _prepare(ctx, parts: Parts) -> bool:
    from .points import own_point_locations, p2p_waits_out, p2p_waits_received

    # the numbering and the point-to-point wait states read nothing of each
    # other: one step for both
    local = {}
    every, waits = parts.together(
        lambda: [_numbering_mine(ctx, parts, local)] * parts.size,
        lambda: p2p_waits_out(ctx, parts))
    ctx.memo("rc_numbering", lambda: _numbering_of(ctx, parts, every, local))
    del every
    p2p_waits_received(ctx, parts, waits)

    def own_points():
        locs = own_point_locations(ctx)
        has = np.zeros(ctx.n_locations, dtype=np.int64)
        has[locs[parts.own[locs]]] = 1
        return has
    every = parts.sum(own_points)
    ctx.memo("rc_mpi_locations", lambda: np.nonzero(every > 0)[0].astype(np.int64))
    return True


def match_keys(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Per key of `theirs`, the index of the same key in `mine` (-1 if none);
    a key that occurs several times matches its occurrences in order."""
    mine = np.asarray(mine, dtype=np.int64)
    theirs = np.asarray(theirs, dtype=np.int64)
    out = np.full(len(theirs), -1, dtype=np.int64)
    if not len(mine) or not len(theirs):
        return out
    om = np.argsort(mine, kind="stable")
    ot = np.argsort(theirs, kind="stable")
    sm, st = mine[om], theirs[ot]
    # the k-th occurrence of a key in theirs matches its k-th occurrence in mine
    first_m = np.searchsorted(sm, st, side="left")
    first_t = np.searchsorted(st, st, side="left")
    at = first_m + (np.arange(len(st)) - first_t)
    ok = at < len(sm)
    ok[ok] = sm[at[ok]] == st[ok]
    out[ot[ok]] = om[at[ok]]
    return out


__all__ = ["Parts", "parts_of", "prepare", "Numbering", "GlobalCnodes", "numbering",
           "match_keys"]
