"""The race analysis of a trace bigger than memory: its parts replayed one
after another in one process (docs/memory.md, "Races"), with the races of the
analysis in one piece.

The race replay's clocks (docs/races.md: lazy vector clocks and a lazy
Lamport value) cross parts as the happened-before stamps do: a send's clock
goes to its receiver's part, the receiver's clock after a synchronous send
back to the sender's, a collective member's begin to the other members'
parts.  Under MPI the parts trade them in rounds (replay.py); here only one
part is alive at a time, so the clocks of the *crossing* events (those other
parts wait for) are found in three steps, through the scratch folder:

  pass A, part by part: the part's replay with a symbolic clock for each
          event of another part it waits for (a *need*: zero but for its
          producing location's vector entry, its rank among the needs of
          that location, and a Lamport value of 0), as frontier.py does for
          the stamps; each crossing event's clock and the needs go to the
          scratch folder, with what a report shows of the sends others may
          name (their call paths);
  solve:  the vector entries of every crossing event, in one topological
          sweep over them (frontier.py: a vector clock is a maximum, and only
          the latest need of each location counts); its Lamport value a lower
          bound, the largest of its own part's value and those of the needs
          it names;
  sweeps: each part replayed with those clocks for its needs; it gives its
          races and the clocks of its crossing events again, which replace
          the candidates at once (the parts after it in the sweep use them).
          A part runs again only when a clock it read changed.  When no part
          needs to run again, every part ran with the clocks its producers
          give for exactly those inputs: the crossing clocks are a fixed point
          of the replay, and on a trace without cycles that fixed point is
          unique, so it is the whole trace's replay's: the races are exact.
          (A part's replay matches the same records whatever clocks it
          receives, and a crossing clock it produces depends only on the
          clocks of crossing events before it in the order; so by induction
          along that order the fixed point is unique, and whatever the
          candidates, after k sweeps every crossing event with fewer than k
          crossing events before it on any chain is exact: the sweeps end.)

Why sweeps for the Lamport value.  It is a longest path (it ticks at the
wildcard receives and takes the maximum at a match), not a maximum of the
latest foreign event of each location: an older need of a location may reach
an event over more ticks than the latest one.  The solve's value is a lower
bound (every term is a real path); a sweep replays each part exactly, so the
values only grow, to the true ones.  The vector entries are exact after the
solve: a sweep that finds them different (which the order of the needs of a
synchronous receive could cause) mends them the same way.  The number of
sweeps is recorded (`Races.replay.extra`).

Held in memory at once: one part, and the candidate clocks of every crossing
event (4 x (L + 1) bytes each, L the trace's locations, with 24 bytes of keys
and counts) and the needs of every part, which the solve of the search holds
too; the solve (no part) holds the edges between crossing events beside them.
The budget counts them all: the plan first assumes a share of crossing
events (CROSSING_SHARE), pass A counts them, their needs and the solve's
edges, and a plan they overflow is made again with that room and more parts
(pass 1 and pass A again), or refused with the smallest budget a plan
measured to work.  The races found so far wait in the scratch folder until
the merge.  A trace whose order has a cycle across parts (an inconsistent
trace) is refused, as the search in turn refuses it.
"""
from __future__ import annotations

import pickle
from typing import Dict, List, Optional

import numpy as np

from .. import _core
from ..clocks import sorted_unique
from ..races import Races, RacesError, WildcardsNotRecorded, _select
from .causal_inturn import CycleAcrossParts
from .frontier import NoOrder, _sweep, clock_records, need_ranks
from .budget import BudgetError, format_size
from .inturn import ATTEMPTS, InTurn, Progress, _round_up, plan_parts
from .plan import process_of_locations
from .part import POSITION_BITS
from .races import ATTRIBUTES, MergedRaces
from .replay import ReplayStats

SENT, ACK, BEGIN = 0, 1, 2  # earl_races_crossing

#: bytes held per crossing event besides its clock: its key, when its clock last
#: changed, its row in its part's list (the solve and the sweeps)
CROSSING_BYTES = 24
#: bytes held per need of a part (its row among the crossing events)
NEED_BYTES = 8
#: bytes per crossing event the solve holds besides: the keys' sort order and
#: the rows of each part's events, then earl_hb_frontier_solve's (20)
SOLVE_BYTES = 24
#: bytes per edge of the solve: its two ends (int64), earl_hb_frontier_solve's
#: list of the edges from each event (8), and the part's edges being made
EDGE_BYTES = 28
#: the crossing events first assumed, as a share of the trace's events (pass A
#: counts them, and the parts are planned again when they overflow the budget):
#: 0.05 to 0.11 on the generated halo exchanges in 4 to 16 parts
CROSSING_SHARE = 0.1
#: the merge of the parts' races holds their pieces and the result at once
MERGE_COPIES = 2.5

#: sweeps after which the analysis gives up (each is a pass over the parts that
#: changed; the Lamport values only grow, so it ends, but a bound says so)
MAX_SWEEPS = 1000

#: False stops after the first sweep, with the solve's Lamport values: for the
#: tests that show why the sweeps are needed
SETTLE = True


def _named(key: np.ndarray, sym: np.ndarray):
    """Of a part's crossing events (their keys, and their clocks' entries of
    other parts' locations), the entries that give an edge of the solve
    (RacesInTurn._edges): (rows, columns) of the entries named, and per event
    the previous crossing event of its location (-1) with the events that have
    one."""
    rows = np.nonzero((key & 3) != ACK)[0]
    rows = rows[np.argsort(key[rows], kind="stable")]
    loc = (key[rows] >> 2) >> POSITION_BITS
    same = loc[1:] == loc[:-1]
    prev = np.full(len(key), -1, dtype=np.int64)
    prev[rows[1:][same]] = rows[:-1][same]
    chained = np.nonzero(prev >= 0)[0]
    named = sym > 0
    named[chained] &= sym[chained] > sym[prev[chained]]
    i, j = np.nonzero(named)
    return i, j, prev, chained


class _Totals:
    """Stands for the exchange of a part in earlc.races._select, which sums
    over the parts what decides the wildcards (receives, recorded sources and
    tags): in turn the sums come from pass A, which saw every part."""

    def __init__(self, totals: Optional[np.ndarray]):
        self.totals = totals
        self.local: Optional[np.ndarray] = None

    def allreduce_sum(self, values):
        self.local = np.asarray(values, dtype=np.int64).copy()
        return self.local if self.totals is None else self.totals


def _decision(wildcard, triple) -> tuple:
    """What the sums (receives, recorded, tags recorded) decide: the same
    tuple, the same wildcards."""
    n, recorded, tags = (bool(x) for x in triple)
    if wildcard is None or (isinstance(wildcard, str) and wildcard == "recorded"):
        return ("none",) if not n else ("error",) if not recorded else ("recorded", tags)
    return ("chosen", tags)


class RacesInTurn:
    """The race analysis of every part in turn (see the module)."""

    def __init__(self, it: InTurn, wildcard, clocks: str):
        if it.representatives:
            raise ValueError("the races in turn need every member of each collective: open "
                             "the parts with collectives='all'")
        self.it, self.wildcard, self.clocks = it, wildcard, clocks
        # every location gets a vector entry: one with no MPI records keeps
        # zero, so the races are those of the whole trace's entries
        self.clocked = np.ones(it.n_locations, dtype=np.uint8)
        # pass A replays vector clocks even for clocks="lamport": the solve
        # over them finds the cycles across parts, which would make the
        # Lamport values of the sweeps grow without end
        self.width = it.n_locations
        self.w1 = self.width + 1
        self.totals: Optional[np.ndarray] = None
        self.assumption: Optional[dict] = None
        self.stats = ReplayStats()
        self.stats.extra["method"] = "sweeps"
        #: the call paths the report may show, each once: path -> its index
        self.path_index: Dict[str, int] = {}
        #: the analysis's model, without the room the races hold across parts
        self.base = it.model
        self.n_crossing = 0
        self.n_needs = np.zeros(0, dtype=np.int64)
        if it.times is None and it._fixed_parts is None and CROSSING_SHARE > 0:
            guess = CROSSING_SHARE * float(it.declared.sum()) * self._per_crossing()
            try:
                self._plan(int(guess))
            except BudgetError:  # the guess may be too high: pass A measures
                pass

    def _per_crossing(self) -> int:
        """Bytes held per crossing event while the solve and the sweeps run:
        its vector clock (with the Lamport value) and CROSSING_BYTES."""
        return 4 * (self.it.n_locations + 1) + CROSSING_BYTES

    #: the room planned beside each part for what the races hold across parts
    reserve = 0

    def _plan(self, reserve: int, at_least: int = 1, share: Optional[float] = None) -> None:
        """Plan the parts anew (pass 1 to run again) with `reserve` bytes beside
        each part for what the races hold across parts."""
        import dataclasses

        it = self.it
        model = dataclasses.replace(self.base, fixed=self.base.fixed + int(reserve))
        kw = {} if share is None else {"ghost_share": share}
        pp = plan_parts(it.defs, it.declared, model, it.budget, at_least=at_least, **kw)
        it.model, it.pp, it.times = model, pp, None
        later = it.progress.later
        it.progress = Progress(it.progress.fn, pp)
        it.progress.later = later
        self.reserve = int(reserve)

    def _held(self, p: int) -> int:
        """Bytes held beside part p while it is replayed, or in the solve: the
        crossing clocks, every part's needs, and p's needs' clocks handed to
        its replay (the records; the replay's copy is counted with the part)."""
        return int(self.n_crossing * self._per_crossing() + NEED_BYTES * self.n_needs.sum() +
                   self.n_needs[p] * (8 + 4 * (self.it.n_locations + 1)))

    def _part_peak(self, p: int) -> int:
        """The model's peak of part p alone (its own events and ghosts)."""
        pp = self.it.pp
        return self.base.part(int(pp.own_events[p]), int(pp.ghosts[p]), int(pp.locations[p]))

    def _need(self) -> int:
        """After pass A: the model's peak of the largest part with what the
        races hold beside it, or of the solve (no part, the crossing clocks
        and the edges between them), whichever is larger."""
        return int(max(self._solve_need(), max(self._part_peak(p) + self._held(p)
                                               for p in range(self.parts))))

    def _solve_need(self) -> int:
        return int(self.base.fixed + self.n_crossing * (self._per_crossing() + SOLVE_BYTES) +
                   NEED_BYTES * self.n_needs.sum() + EDGE_BYTES * self.n_edges)

    def _check_merge_room(self) -> None:
        """The merge holds every part's races and the result (MERGE_COPIES
        times their size on disk): refused in one line when that overflows
        the budget, rather than killed."""
        need = int(self.base.fixed + MERGE_COPIES * self.piece_bytes.sum())
        if need > self.it.budget and self.it._fixed_parts is None:
            raise BudgetError(
                "a memory budget of %s is too small for the races of this trace: the races "
                "found among its %s receives take about %s to merge; "
                "the smallest budget that works is %s"
                % (format_size(self.it.budget), format(int(self.totals[0]), ","),
                   format_size(need), _round_up(need)))

    def _most_parts(self) -> int:
        """One part per process: no plan has more."""
        return int(process_of_locations(self.it.defs).max(initial=0)) + 1

    def _too_small(self, need: int) -> BudgetError:
        """The budget refused, with the least that a plan measured needs."""
        return BudgetError(
            "a memory budget of %s is too small for the races of this trace in parts: a "
            "part with the clocks of the %s events that cross parts takes about %s; the "
            "smallest budget that works is %s"
            % (format_size(self.it.budget), format(self.n_crossing, ","),
               format_size(need), _round_up(need)))

    @property
    def parts(self) -> int:
        return self.it.pp.parts

    @property
    def part_of(self) -> np.ndarray:
        """Per location, its part (pass 1 may have planned again, with more)."""
        return self.it.pp.partition.part_of

    # -- one part -------------------------------------------------------------------------
    def _core(self, part, lamport: bool = False):
        """The part's PartRaces, its wildcards chosen as for the whole trace."""
        ex = _Totals(self.totals)
        part.exchange = ex
        try:
            if callable(self.wildcard) or self.totals is not None:
                source, tag, assumption = _select(part.trace, self.wildcard)
            else:  # errors the sums decide wait for every part's sums
                try:
                    source, tag, assumption = _select(part.trace, self.wildcard)
                except WildcardsNotRecorded:
                    source, tag, assumption = None, None, {"error": part.trace.path}
        finally:
            part.exchange = None
        core = _core.PartRaces(part.trace._core, part.trace.states._core,
                               requested_source=source, requested_tag=tag,
                               lamport=lamport, clocked=self.clocked)
        return core, ex.local, assumption

    def _keys(self, part, kinds: np.ndarray, events: np.ndarray) -> np.ndarray:
        """The whole trace's key of (kind, event) pairs: location and position
        of the event, and the kind."""
        ev = part.trace.events
        loc = ev.location[events].astype(np.int64)
        pos = part.positions(events) if len(events) else np.empty(0, np.int64)
        return (((loc << POSITION_BITS) | pos) << 2) | kinds.astype(np.int64)

    def _producers(self, part, kinds, events):
        """Per need, the location that produces its clock and the position
        there that orders it (a synchronous send's: its receive)."""
        ev = part.trace.events
        at = events.copy()
        ack = kinds == ACK
        if ack.any():
            at[ack] = part.trace.states.gather("recvptr", events[ack])
        loc = ev.location[at].astype(np.int32)
        return loc, part.positions(at) if len(at) else np.empty(0, np.int64)

    def _crossing(self, part, core):
        """(keys, clocks) of the crossing events the replay produced."""
        _, records = core.take(1)
        rec = np.frombuffer(records, dtype=[("ticket", "<u8"), ("clock", "<u4", (self.w1,))])
        key = rec["ticket"].astype(np.int64)
        kinds = (key & 3).astype(np.uint8)
        return self._keys(part, kinds, key >> 2), np.ascontiguousarray(rec["clock"])

    # -- pass A ---------------------------------------------------------------------------
    def pass_a(self, p: int, part) -> None:
        core, local, assumption = self._core(part)
        self.sums[p] = local if local is not None else np.zeros(3, np.int64)
        self.assumptions[p] = assumption
        kinds, events = core.needs()
        kinds = np.frombuffer(kinds, dtype=np.uint8)
        events = np.frombuffer(events, dtype=np.int64)
        nloc, npos = self._producers(part, kinds, events)
        symbolic = np.zeros((len(events), self.w1), dtype=np.uint32)
        symbolic[np.arange(len(events)), nloc] = need_ranks(nloc, npos)
        core.export_crossing()
        if len(events):
            core.receive(clock_records(np.arange(len(events), dtype=np.uint64), symbolic))
        del symbolic
        self._run(core)
        xkey, xclock = self._crossing(part, core)
        del core
        # the crossing clocks apart from the rest: the solve reads the keys of
        # every part first and then each part's clocks straight into their rows
        self.it.scratch.write("ra%d.bin" % p, pickle.dumps(
            {"nkey": self._keys(part, kinds, events), "nloc": nloc, "npos": npos},
            protocol=pickle.HIGHEST_PROTOCOL))
        self.it.scratch.write("rk%d.bin" % p, xkey)
        self.it.scratch.write("rc%d.bin" % p, xclock.ravel())
        self.n_needs[p] = len(events)
        self.n_crossing += len(xkey)
        i, _, _, chained = _named(xkey, xclock[:, np.nonzero(self.part_of != p)[0]])
        self.n_edges += len(i) + len(chained)
        self.it.scratch.write("rs%d.bin" % p, pickle.dumps(
            self._send_attributes(part, xkey), protocol=pickle.HIGHEST_PROTOCOL))

    def _send_attributes(self, part, xkey: np.ndarray) -> dict:
        """What a report shows of the part's sends to other parts, which their
        races may name (a ghost's call path is known to its owner only)."""
        sent = np.sort(xkey[(xkey & 3) == SENT])
        loc = (sent >> 2) >> POSITION_BITS
        pos = (sent >> 2) & ((1 << POSITION_BITS) - 1)
        ev = part.trace.events
        from .replay import own_events_at

        ids = own_events_at(ev, loc, pos) if len(sent) else np.empty(0, np.int64)
        attrs, paths = self._attributes(part, ids)
        return {"keys": sent, "attrs": attrs, "paths": paths}

    def _attributes(self, part, ids: np.ndarray):
        """ATTRIBUTES (event: the whole trace's id) and call paths of events
        of the part."""
        ev = part.trace.events
        out = np.empty(len(ids), dtype=ATTRIBUTES)
        out["location"] = ev.location[ids] if len(ids) else []
        out["time"] = ev.time[ids] if len(ids) else []
        if len(ids):
            out["event"] = self.it.times.count_before(*part.keys(ids))
            ref = ev.ref_of(ids)
            out["tag"] = np.where(ref >= 0, ev.messages.tag[np.maximum(ref, 0)]
                                  .astype(np.int64), -1)
        return out, self._callpaths(part.trace, ids)

    def _callpaths(self, trace, ids: np.ndarray) -> np.ndarray:
        """Each event's call path (as Races.callpath says it) as its index in
        self.path_index: the enclosing enters walked level by level for all
        events at once, one string made per distinct path."""
        st, ev = trace.states, trace.events
        levels = []
        cur = st.enterptr_of(ids) if len(ids) else np.empty(0, np.int64)
        while len(cur) and (cur >= 0).any():
            live = cur >= 0
            safe = np.maximum(cur, 0)
            levels.append(np.where(live, ev.region_of(safe).astype(np.int64), -1))
            cur = np.where(live, st.enterptr_of(safe), -1)
        if not levels:
            return np.full(len(ids), self._path("", None), dtype=np.int32)
        # number the distinct paths level by level (a path: its enclosing
        # path's number and its region), then make one string per number
        code = np.zeros(len(ids), dtype=np.int64)
        for level in levels:
            _, code = np.unique(code * (1 << 33) + (level + 1), return_inverse=True)
            code = code.ravel()
        distinct, first = np.unique(code, return_index=True)
        names = trace._region_name_array()
        index = np.array([self._path([int(l[k]) for l in levels], names)
                          for k in first.tolist()], dtype=np.int32)
        return index[np.searchsorted(distinct, code)]

    def _path(self, refs, names) -> int:
        """The index of a call path, given by its region refs innermost first."""
        parts = [names[r] if r < len(names) and names[r] is not None else "?"
                 for r in reversed(refs) if r >= 0] if names is not None else []
        return self.path_index.setdefault("/".join(parts), len(self.path_index))

    def _run(self, core) -> None:
        """Replay the part with every clock it needs received."""
        core.run()
        if self.parts == 1:  # the whole trace: its cycles broken as in one piece
            while core.unfinished():
                core.force(core.waiting())
                core.run()
        if core.unfinished():
            raise self._cycle()

    def _cycle(self):
        return CycleAcrossParts(
            "the matches-before order of this trace has a cycle across its parts (an "
            "inconsistent trace, docs/races.md): its races cannot be found one part after "
            "another; analyse it in one piece (--memory unlimited) or under mpiexec")

    # -- the solve ------------------------------------------------------------------------
    def solve(self) -> None:
        """The candidate clocks of every crossing event (see the module), and
        which of them each part reads."""
        scratch = self.it.scratch
        xkeys = [scratch.load("rk%d.bin" % p, np.int64) for p in range(self.parts)]
        start = np.cumsum([0] + [len(k) for k in xkeys])
        keys = np.concatenate(xkeys)
        del xkeys
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        del keys
        where = np.empty(len(order), dtype=np.int64)  # node of each part's crossing event
        where[order] = np.arange(len(order))
        del order
        self.crossing = [where[start[p]:start[p + 1]] for p in range(self.parts)]
        del where
        # one table of clocks, filled part by part: never a second copy of it
        self.clock = np.empty((len(self.keys), self.w1), dtype=np.uint32)
        for p in range(self.parts):
            self.clock[self.crossing[p]] = scratch.load("rc%d.bin" % p, np.uint32).reshape(
                -1, self.w1)
        self.needs: List[np.ndarray] = []
        # the edges' ends in two arrays of the size pass A counted (no list of
        # pieces joined beside them)
        src = np.empty(self.n_edges, dtype=np.int64)
        dst = np.empty(self.n_edges, dtype=np.int64)
        filled = 0
        for q in range(self.parts):
            s = pickle.loads(scratch.load("ra%d.bin" % q, np.uint8).tobytes())
            at = self._nodes(s["nkey"])
            self.needs.append(at)
            edges = self._edges(q, s["nloc"], s["npos"], at)
            del s
            for a, b in zip(*edges):
                if filled + len(a) > len(src):  # pass A counted them: never
                    raise AssertionError("the solve has more edges than pass A counted")
                src[filled:filled + len(a)] = a
                dst[filled:filled + len(b)] = b
                filled += len(a)
            del edges
        if filled:
            self.clock = _sweep(self.clock, src[:filled], dst[:filled])
        del src, dst
        if self.clocks == "lamport":  # the sweeps replay the Lamport value alone
            self.width, self.w1 = 0, 1
            self.clock = np.ascontiguousarray(self.clock[:, -1:])
        self.stats.extra["crossing"] = int(len(self.keys))

    def _edges(self, q: int, nloc: np.ndarray, npos: np.ndarray, at: np.ndarray):
        """The edges into part q's crossing events, and their symbolic ghost
        entries cleared: from the need each ghost entry names (rank r of
        location m is the r-th need of m by position), and from the previous
        crossing event of the same location (a clock only grows along a
        location), which leaves out the needs that one named already: a few
        edges per crossing event instead of one per location it knows of.  An
        ACK (a receiver's clock for a synchronous sender) is ordered by its
        send, not where its location produced it, so it takes no part in the
        chains."""
        srt = np.lexsort((npos, nloc))
        by_rank = at[srt]
        first = np.searchsorted(nloc[srt], np.arange(self.width))
        ghost = np.nonzero(self.part_of != q)[0]
        mine = self.crossing[q]
        sym = self.clock[mine][:, ghost]
        i, j, prev, chained = _named(self.keys[mine], sym)
        r = sym[i, j].astype(np.int64)
        del sym
        m = ghost[j]
        if len(r) and (r > np.bincount(nloc, minlength=self.width)[m]).any():
            raise ValueError("a crossing event's clock names a need part %d does not have" % q)
        cleared = self.clock[mine]
        cleared[:, ghost] = 0
        self.clock[mine] = cleared
        return ([by_rank[first[m] + r - 1], mine[prev[chained]]], [mine[i], mine[chained]])

    def _nodes(self, nkey: np.ndarray) -> np.ndarray:
        at = np.searchsorted(self.keys, nkey)
        if len(nkey) and (at.max() >= len(self.keys) or
                          not np.array_equal(self.keys[at], nkey)):
            raise self._cycle()  # a part waits for an event no part produced
        return at

    # -- the sweeps -----------------------------------------------------------------------
    def sweep_part(self, p: int, part) -> bool:
        """Replay part p with the candidate clocks of its needs; its piece of
        the result.  Whether a crossing clock it produced changed."""
        core, _, _ = self._core(part, lamport=self.clocks == "lamport")
        need = self.needs[p]
        self.tick += 1
        self.ran_at[p] = self.tick
        core.export_crossing()
        if len(need):
            core.receive(clock_records(np.arange(len(need), dtype=np.uint64),
                                       self.clock[need]))
        self._run(core)
        xkey, xclock = self._crossing(part, core)
        nodes = self._nodes(xkey)
        differ = (self.clock[nodes] != xclock).any(axis=1) if len(nodes) else \
            np.zeros(0, bool)
        changed = bool(differ.any())
        if changed:
            self.clock[nodes[differ]] = xclock[differ]
            self.changed_at[nodes[differ]] = self.tick
        local = Races(part.trace, core.finish(), self.assumption)
        # kept on disk until the merge: the races found so far are not held
        # beside the parts that follow
        piece = pickle.dumps(self._piece(p, part, local), protocol=pickle.HIGHEST_PROTOCOL)
        self.it.scratch.write("rp%d.bin" % p, piece)
        self.piece_bytes[p] = len(piece)
        return changed

    def _piece(self, p: int, part, local) -> dict:
        """What part p found, in the whole trace's ids, with what the report
        shows of the events it names (the sends of other parts: from their
        owners, pass A)."""
        ev = part.trace.events
        finding_events = np.array([f.event for f in local.findings], dtype=np.int64)
        took = local.recv_send[local.recv_send >= 0]
        refs = sorted_unique(np.concatenate([local.recv, local.recv_posted, took,
                                             local.alt_send, finding_events]).astype(np.int64))
        own = part.own[ev.location[refs]] if len(refs) else np.zeros(0, bool)
        attrs = np.empty(len(refs), dtype=ATTRIBUTES)
        paths = np.empty(len(refs), dtype=np.int32)
        attrs[own], paths[own] = self._attributes(part, refs[own])
        ghosts = np.nonzero(~own)[0]
        if len(ghosts):
            keys = self._keys(part, np.full(len(ghosts), SENT, np.uint8), refs[ghosts])
            for q in np.unique(self.part_of[ev.location[refs[ghosts]]]).tolist():
                sends = pickle.loads(self.it.scratch.load("rs%d.bin" % q, np.uint8).tobytes())
                sel = ghosts[self.part_of[ev.location[refs[ghosts]]] == q]
                at = np.searchsorted(sends["keys"], keys[np.searchsorted(ghosts, sel)])
                attrs[sel] = sends["attrs"][at]
                paths[sel] = sends["paths"][at]
                del sends
        gids = attrs["event"]

        def g(ids):
            return gids[np.searchsorted(refs, ids)] if len(ids) else np.empty(0, np.int64)

        recv_send = np.full(len(local.recv), -1, dtype=np.int64)
        recv_send[local.recv_send >= 0] = g(took)
        # a report shows where receives, their alternatives and findings are;
        # of where a receive was posted and what it took, their ids only
        shown = np.isin(refs, np.concatenate([local.recv, local.alt_send, finding_events]))
        attrs, paths = attrs[shown], paths[shown]
        return {"recv": g(local.recv), "recv_posted": g(local.recv_posted),
                "recv_send": recv_send, "recv_any_tag": local.recv_any_tag,
                "n_alternatives": local.n_alternatives, "alt_send": g(local.alt_send),
                "alt_lamport": local.alt_lamport,
                "findings": [(f.kind, f.location, int(e), f.count) for f, e in
                             zip(local.findings, g(finding_events))],
                "attrs": attrs, "paths": paths, "clocks": local.clocks,
                "lamport_missed": local.lamport_missed, "warnings": dict(local.warnings),
                "memory": dict(local.memory)}

    # -- the whole ------------------------------------------------------------------------
    def run(self):
        it = self.it
        best = None  # the least a plan measured so far needs
        for attempt in range(ATTEMPTS):
            if it.times is None:
                it.pass1()
            self._pass_a_all()
            need = self._need()
            best = need if best is None else min(best, need)
            if need <= it.budget or it._fixed_parts is not None:
                break
            # more parts only add crossing events to a solve that overflows
            if attempt + 1 == ATTEMPTS or self.parts >= self._most_parts() or \
                    self._solve_need() > it.budget:
                raise self._too_small(best)
            # room for what was held, a quarter more (more parts, more crossing
            # events), and the share of ghosts measured
            pp = it.pp
            share = 1.1 * max(float(pp.ghosts[p]) / max(float(pp.own_events[p]), 1.0)
                              for p in range(self.parts))
            held = max(self._held(p) for p in range(self.parts))
            try:
                self._plan(int(1.25 * held), at_least=self.parts + 1, share=share)
            except BudgetError:  # not even one process fits with that room
                raise self._too_small(best) from None
            self.stats.extra["plans"] = self.stats.extra.get("plans", 1) + 1
        self.assumption = self._assumption()
        self.solve()
        for p in range(self.parts):
            for name in ("ra%d.bin", "rk%d.bin", "rc%d.bin"):
                self.it.scratch.delete(name % p)
        self.piece_bytes = np.zeros(self.parts, dtype=np.int64)
        # when each part last ran, and each crossing clock last changed, in
        # runs of parts counted from 1: a part whose needs changed since runs again
        self.tick = 0
        self.ran_at = np.zeros(self.parts, dtype=np.int64)
        self.changed_at = np.zeros(len(self.keys), dtype=np.int64)
        stale = list(range(self.parts))
        sweeps = 0
        while stale:
            sweeps += 1
            if sweeps > MAX_SWEEPS:
                raise RuntimeError("the race replay in turn did not settle after %d sweeps"
                                   % MAX_SWEEPS)
            pass_no = 2  # the first sweep is the pass the progress expects
            if sweeps > 1:  # one more, over the parts that read a changed clock
                pass_no = it.progress.add_pass(np.isin(np.arange(self.parts), stale))
            for p in stale:
                part = it.open(p, pass_no=pass_no)
                self.sweep_part(p, part)
                it.let_go(part)
                del part
                it.progress.end()
                self.stats.extra["part_runs"] = self.stats.extra.get("part_runs", 0) + 1
            stale = [p for p in range(self.parts) if SETTLE and len(self.needs[p]) and
                     self.changed_at[self.needs[p]].max() > self.ran_at[p]]
        for p in range(self.parts):
            self.it.scratch.delete("rs%d.bin" % p)
        del self.clock, self.keys, self.changed_at, self.needs, self.crossing
        self._check_merge_room()
        pieces = []
        for p in range(self.parts):
            pieces.append(pickle.loads(self.it.scratch.load("rp%d.bin" % p, np.uint8).tobytes()))
            self.it.scratch.delete("rp%d.bin" % p)
        self.stats.rounds = sweeps
        self.stats.extra["sweeps"] = sweeps
        stub = it.stub()
        stub.trace.part = stub  # times are counted from the whole trace's first event
        names = [""] * len(self.path_index)
        for path, k in self.path_index.items():
            names[k] = path
        return MergedRaces(stub.trace, pieces, self.assumption, self.stats, names=names)

    def _pass_a_all(self) -> None:
        """Pass A over every part (twice when a part's own receives decided
        its wildcards otherwise than the whole trace's do)."""
        it = self.it
        it.progress.later = 2
        self.sums: List[np.ndarray] = [None] * self.parts
        self.assumptions: List[dict] = [None] * self.parts
        self.path_index = {}
        for attempt in range(2):
            self.n_needs = np.zeros(self.parts, dtype=np.int64)
            self.n_crossing = self.n_edges = 0
            for p in range(self.parts):
                part = it.open(p, pass_no=1)
                self.pass_a(p, part)
                it.let_go(part)
                del part
                it.progress.end()
            if self.totals is not None:
                break
            self.totals = np.sum(self.sums, axis=0)
            # a part whose own sums decide otherwise than the whole trace's
            # chose its wildcards wrongly: pass A again, with the sums known
            if all(_decision(self.wildcard, s) == _decision(self.wildcard, self.totals)
                   for s in self.sums):
                break
            self.stats.extra["wildcards_again"] = True

    def _assumption(self) -> dict:
        """The whole trace's assumption (its error, when it has no wildcards)."""
        want = _decision(self.wildcard, self.totals)
        for s, a in zip(self.sums, self.assumptions):
            if _decision(self.wildcard, s) == want:
                if "error" in a:  # told with the whole trace's receives
                    raise WildcardsNotRecorded(a["error"], int(self.totals[0]))
                return a
        raise AssertionError("no part decided as the whole trace")


def races_in_turn(it: InTurn, wildcard=None, clocks: str = "vector", progress=None):
    """InTurn.races: the whole trace's races (earlc.races's arguments)."""
    if clocks not in ("vector", "lamport"):
        raise RacesError("clocks must be 'vector' or 'lamport', not %r" % (clocks,))
    if progress is not None:
        it.progress.fn = progress
    races = RacesInTurn(it, wildcard, clocks)
    try:
        return races.run()
    except NoOrder:
        raise races._cycle() from None


__all__ = ["races_in_turn", "RacesInTurn"]
