"""What every property reads: the trace, the EARL layer, the call tree, and
per-event arrays derived once and shared (the enter and leave times of each
event's enclosing region instance, region classes, ...).  Everything is computed
lazily on first use, so an analysis that needs little pays little.

The context's public methods are all a property needs: the built-in properties
(properties/) use nothing else, so a plugin can do whatever a built-in does
(docs/plugins.md lists them).  Enumerations of events (events_of_kind,
enters_of, matched_messages, collective_members) consult `view`: a window's
analysis (window.py) sees only the events in view."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from .. import _core
from ..calltree import CallTree
from ..events import KINDS
from . import regions as rc
from .published import Published
from .reductions import int64_array
from .schedule import Once, once_property

#: the columns of matched_messages, in the order _core.p2p_messages fills them
P2P_COLUMNS = ("recv", "send", "recv_call", "send_call", "recv_call_time", "send_call_time",
               "completion_call", "request_call")
#: the types of collective instances of the EARL layer (states.COLL_TYPES), by name
COLLECTIVE_TYPES = {"mpi": 0, "omp_barrier": 1}


class AnalysisContext:
    #: the events the properties enumerate, None for all (a window's analysis
    #: sets it: analysis/window.py)
    view = None
    #: the engine's pool while properties run on several threads (schedule.py)
    _pool = None

    def __init__(self, trace, threads: int = 1):
        #: the trace's definitions (locations, regions, communicators, ...); for a
        #: part of a trace analysed in parts, only those: the events a property
        #: reads come through the context (ctx.events, events_of_kind, ...)
        self.trace = trace if trace.part is None else trace.part.definitions()
        self._trace = trace
        self.events = trace.events
        self.n_events = len(trace)
        self.n_locations = len(trace.locations)
        self.kinds = KINDS
        #: threads the analysis may use (at least 1)
        self.threads = max(1, int(threads))
        #: the engine's store of published instances (published.py)
        self._published = Published(self)
        self._warnings: List[tuple] = []  # (source, code, detail)
        self._local = threading.local()   # per thread: the sources being evaluated
        self._memo_lock = threading.Lock()
        self._memo: Dict[object, Once] = {}
        self._memo_users: Dict[object, set] = {}  # memo key -> the sources that asked

    def kernel_threads(self) -> int:
        """Threads a C kernel may use now: the analysis's threads that no other
        property is using at the moment (its results never depend on it)."""
        pool = self._pool
        if pool is None:
            return self.threads
        return max(1, self.threads - pool.busy() + 1)

    # -- what is being evaluated, for the order of the warnings ---------------------------
    def _sources(self) -> list:
        stack = getattr(self._local, "sources", None)
        if stack is None:
            stack = self._local.sources = []
        return stack

    @contextmanager
    def evaluating(self, position: int):
        """The property at this position of the evaluation order runs in the
        block (on this thread)."""
        stack = self._sources()
        stack.append(("property", position))
        try:
            yield
        finally:
            stack.pop()

    @property
    def analysis_warnings(self) -> List[Tuple[str, str]]:
        """The analysis's own counted warnings, (code, detail), in the order of
        the properties that said them (a shared computation's: of the first
        property that asked for it), then by code and detail: the same for any
        number of threads."""
        memo_rank: Dict[object, float] = {}

        def rank(source, seen=()) -> float:
            if source is None:
                return float("inf")
            kind, what = source
            if kind == "property":
                return what
            if what in memo_rank:
                return memo_rank[what]
            if what in seen:
                return float("inf")
            r = min((rank(u, seen + (what,)) for u in self._memo_users.get(what, ())),
                    default=float("inf"))
            memo_rank[what] = r
            return r

        said = sorted(self._warnings, key=lambda w: (rank(w[0]), w[1], w[2]))
        return [(code, detail) for _, code, detail in said]

    @property
    def published(self):
        """The published instances this property declares (subscribes, reads), by
        name, while it runs; reading another name raises UndeclaredRead.  Outside
        a property's evaluation: everything published."""
        return self._published.visible()

    def counted(self, inst):
        """The occurrences of inst the analysis counts: all of them (the analysis of a
        view counts those of its events, analysis/view.py)."""
        return inst

    def warn(self, code: str, detail: str) -> None:
        """A counted warning of the analysis (the numbers are right but need a
        word): the report counts it under `code` and lists its detail."""
        stack = self._sources()
        self._warnings.append((stack[-1] if stack else None, code, detail))

    def memo(self, key, compute):
        """compute() once per analysis; what several properties share.  Computed
        by the first property that asks; one asking meanwhile on another thread
        waits for it."""
        stack = self._sources()
        with self._memo_lock:
            self._memo_users.setdefault(key, set()).add(stack[-1] if stack else None)
            once = self._memo.get(key)
            if once is None:
                once = self._memo[key] = Once()

        def computing():
            stack.append(("memo", key))
            try:
                return compute()
            finally:
                stack.pop()
        pool = self._pool
        return once.get(computing, pool.waiting if pool is not None else None)

    def forget(self, *keys) -> None:
        """Let go of what memo kept under these keys, once their last reader
        is done (a later memo of a key computes it again): what a computation
        of several steps holds only for its next step need not stay through
        the steps after."""
        with self._memo_lock:
            for key in keys:
                self._memo.pop(key, None)

    def forget_shared(self) -> None:
        """Let go of what memo kept, once the analysis is done: the report keeps
        this context, and a later use computes it again."""
        with self._memo_lock:
            self._memo = {}

    # -- the EARL layer and the call tree ------------------------------------------
    @once_property
    def states(self):
        # built here, the EARL layer's pass walks the call tree on the way, which
        # the call tree below takes (a walk less over every event)
        with_calltree = getattr(self._trace, "states_with", None)
        return with_calltree(calltree=True) if with_calltree else self._trace.states

    @once_property
    def calltree(self) -> CallTree:
        # the EARL layer first, as this context builds it (the call tree walked on
        # its way): else CallTree's trace.states would build it without, and the
        # tree would be walked apart, a path of its own on one thread
        self.states
        ct = CallTree(self._trace, threads=self.kernel_threads())
        enters, fork_part, join_part = self.thread_management()
        if len(enters):
            ct.charge_thread_management(self, enters, fork_part + join_part)
        return ct

    def thread_management(self):
        """Per ENTER of an OpenMP parallel region on any thread of the team: (enter,
        fork part, join part) as Scalasca charges thread management: from the team's
        fork to the thread's enter, and from the thread's leave to the team's join
        (each at least 0).  Shared with the call tree, which counts this time in the
        parallel region (see calltree)."""
        def compute():
            none = np.empty(0, np.int64)
            if not self.count_of_kind("THREAD_FORK", "OMP_FORK"):
                return none, none, none
            table = self.region_class == rc.CLASS_CODE["omp_parallel"]
            table[-1] = False
            enters = self.enters_of(table)
            fork = self.pointer("forkptr", enters)
            ev = self.events
            forks = self.events_of_kind("THREAD_FORK", "OMP_FORK")
            joins = self.events_of_kind("THREAD_JOIN", "OMP_JOIN")
            join_of = pair_forks_and_joins(ev, forks, joins)
            ok = fork >= 0
            enters, fork = enters[ok], fork[ok]
            pos = np.searchsorted(forks, fork)
            ok = (pos < len(forks)) & (forks[np.minimum(pos, len(forks) - 1)] == fork)
            enters, fork, pos = enters[ok], fork[ok], pos[ok]
            join = join_of[pos]
            leave = self.leave_of(enters)
            t_enter = self.time_of(enters)
            fork_part = np.maximum(t_enter - self.time_of(fork), 0)
            has_end = (join >= 0) & (leave >= 0)
            join_part = np.zeros(len(enters), dtype=np.int64)
            join_part[has_end] = np.maximum(self.time_of(join[has_end]) -
                                            self.time_of(leave[has_end]), 0)
            return enters, fork_part, join_part
        return self.memo("omp_thread_management", compute)

    @once_property
    def cnode(self) -> np.ndarray:
        """Call path of every event (-1 outside every region)."""
        return self.calltree.event_cnode

    def metric_locations(self) -> np.ndarray:
        """Per location: whether its counters are time series of their own (an
        OTF2 METRIC location, or one with METRIC records and no region), not
        values of call paths (earlc.metrics)."""
        from ..metrics import metric_locations

        return metric_locations(self._trace)

    # -- regions --------------------------------------------------------------------
    @once_property
    def _region_tables(self):
        return rc.region_tables(self._trace)

    @property
    def region_class(self) -> np.ndarray:
        """Class code (regions.CLASSES) per region ref; last slot: no region."""
        return self._region_tables[0]

    def region_of_enter(self, enters: np.ndarray) -> np.ndarray:
        """Region refs of ENTER events (spare slot for -1).  An ENTER's payload is its
        region, read as it is: the payload of another kind is no region (a row)."""
        spare = len(self.region_class) - 1
        enters = np.asarray(enters)
        reg = self.events.payload[np.maximum(enters, 0)].astype(np.int64)
        np.minimum(reg, spare, out=reg)
        reg[enters < 0] = spare
        return reg

    def is_region(self, enters: np.ndarray, table: np.ndarray) -> np.ndarray:
        """Whether each ENTER (or -1) opens a region for which table is true."""
        return table[self.region_of_enter(enters)] & (enters >= 0)

    @property
    def blocking_receive_region(self) -> np.ndarray:
        """Region table (per region ref, spare slot last) of the calls that block
        until a receive they complete has its message (MPI_Recv, MPI_Wait*, ...)."""
        return self._region_tables[2]

    @property
    def blocking_send_region(self) -> np.ndarray:
        """Region table of the sends that may block until the receive is posted."""
        return self._region_tables[3]

    @property
    def finalize_region(self) -> np.ndarray:
        """Region table of MPI_Finalize."""
        return self._region_tables[4]

    def regions_named(self, *names: str) -> np.ndarray:
        """Region table (per region ref, spare slot last, for enters_of and
        is_region) of the regions with one of these names."""
        table = np.isin(self._region_tables[1], list(names))
        table[-1] = False
        return table

    def enters_of_regions(self, *names: str) -> np.ndarray:
        """ENTER events of the regions with one of these names."""
        return self.enters_of(self.regions_named(*names))

    def in_regions(self, enters: np.ndarray, *names: str) -> np.ndarray:
        """Whether each ENTER (or -1) opens a region of one of these names
        (ctx.in_regions(msgs["recv_call"], "MPI_Recv", "MPI_Wait"))."""
        return self.is_region(np.asarray(enters, dtype=np.int64), self.regions_named(*names))

    def collective_ops(self, *names: str) -> np.ndarray:
        """The operation codes of MPI collectives by name ("BCAST" or "MPI_Bcast"),
        for comparing with the `op` column of mpi_collectives."""
        from ..otf2names import COLLECTIVE_OPS

        code = {n: k for k, n in COLLECTIVE_OPS.items()}
        out = []
        for n in names:
            key = n.upper()[4:] if n.upper().startswith("MPI_") else n.upper()
            if key not in code:
                raise ValueError("no collective operation %r (operations: %s)"
                                 % (n, ", ".join(sorted(code))))
            out.append(code[key])
        return np.array(out, dtype=np.int64)

    # -- times ------------------------------------------------------------------------
    @once_property
    def _time(self) -> np.ndarray:
        # timestamps are below 2**63: the int64 view is exact and costs no copy
        return self.events.time.view(np.int64)

    def time_of(self, ids: np.ndarray) -> np.ndarray:
        """Timestamps (int64 ticks) of event ids; ids must be >= 0."""
        return self._time[ids]

    def leave_of(self, enters: np.ndarray, inside: np.ndarray = None) -> np.ndarray:
        """The LEAVE of each ENTER (-1 when it never left, and for -1), in C
        (csrc/catalog): looked for right after `inside`, an event of each call
        before its LEAVE (default: the ENTER; the MPI_COLLECTIVE_END of a
        collective call is closer), and where that does not find them, in one
        pass over the events for all at once."""
        enters = np.ascontiguousarray(enters, dtype=np.int64)
        inside = enters if inside is None else np.ascontiguousarray(inside, dtype=np.int64)
        out = np.empty(len(enters), dtype=np.int64)
        if len(enters) > 1 and not bool(np.all(enters[1:] >= enters[:-1])):
            # the pass visits them in the total order: numpy sorts faster than C's qsort
            order = np.argsort(enters)
            _core.leaves_after(self.states._core, enters[order], inside[order], out,
                               threads=self.kernel_threads())
            out[order] = out.copy()
            return out
        _core.leaves_after(self.states._core, enters, inside, out, threads=self.kernel_threads())
        return out

    def pointer(self, name: str, ids: np.ndarray) -> np.ndarray:
        """Pointer attribute `name` (sendptr, lockptr, ...) of the events ids."""
        return self.states.gather(name, ids)

    def enter_of(self, ids: np.ndarray) -> np.ndarray:
        """The ENTER of the region instance enclosing each event (-1: none)."""
        return self.states.enterptr_of(ids)

    def count_of_kind(self, *names) -> int:
        """Events of these kinds in the trace (free: counted while reading)."""
        counts = self._trace.kind_counts()
        return sum(counts.get(n, 0) for n in names)

    def enters_of(self, region_table: np.ndarray) -> np.ndarray:
        """ENTER events of the regions for which region_table (per region ref) holds."""
        table = np.ascontiguousarray(region_table, dtype=bool)
        if not table[:-1].any():
            return np.empty(0, dtype=np.int64)
        table = table.copy()
        table[-1] = False  # refs beyond the table are no region of it
        return self._select(("ENTER",), table.view(np.uint8))

    def events_of_kind(self, *names) -> np.ndarray:
        return self._select(names)

    def _select(self, kinds, regions=None) -> np.ndarray:
        """The events of these kinds (and, with regions, ENTERs of those
        regions), ascending: one pass over the events in C, on the analysis's
        threads."""
        wanted = np.zeros(256, dtype=np.uint8)
        for n in kinds:
            wanted[KINDS[n]] = 1
        ids = _core.select_events(self._trace._core, wanted, regions,
                                  threads=self.kernel_threads())
        return np.frombuffer(ids, dtype=np.int64)

    # -- matched messages and collective instances --------------------------------------
    def matched_messages(self) -> Dict[str, np.ndarray]:
        """Every received point-to-point message with its send, as int64 columns
        of equal length (P2P_COLUMNS): the receive event (MPI_RECV, or the
        MPI_IRECV completing a request), the send, the ENTERs of the calls around
        them and their times, the call completing the send and the call posting
        the receive (-1: none).  Rows in the order of the receives.  Matched in C
        from the EARL layer's sendptr and enterptr (csrc/catalog)."""
        cap = _core.p2p_capacity(self._trace._core)
        cols = {name: np.empty(cap, dtype=np.int64) for name in P2P_COLUMNS}
        n = _core.p2p_messages(self.states._core, *(cols[name] for name in P2P_COLUMNS),
                               threads=self.kernel_threads())
        return {name: col[:n] for name, col in cols.items()}

    def wrong_order_sources(self, recv: np.ndarray, recv_call: np.ndarray, send: np.ndarray,
                            late_call: np.ndarray, late_send: np.ndarray) -> np.ndarray:
        """Scalasca's "wrong order" test.  recv, recv_call, send: received messages
        (matched_messages' columns); late_call, late_send: the receive calls that
        wait and the sends of their messages.  Per waiting call: the location of
        the sender of the first message received later on the same location, by
        a later call, and sent before its own message was; -1 when there is none
        (a search in C, O(n log n))."""
        found = np.empty(len(late_call), dtype=np.int64)
        _core.wrong_order(self._trace._core, int64_array(recv), int64_array(recv_call),
                          int64_array(send), int64_array(late_call), int64_array(late_send),
                          found)
        return found

    def received_out_of_order(self, recv: np.ndarray, recv_call: np.ndarray,
                              send: np.ndarray) -> np.ndarray:
        """The test of Messages in Wrong Order (paper section 6.3) for received
        messages (matched_messages' columns): per message, whether a message of
        the same sender and receiver location that was sent earlier is received
        by a later call.  A bool per message (in C, on the analysis's threads)."""
        wrong = np.empty(len(recv), dtype=np.uint8)
        _core.messages_out_of_order(self._trace._core, int64_array(recv),
                                    int64_array(recv_call), int64_array(send), wrong,
                                    threads=self.kernel_threads())
        return wrong.view(bool)

    def message_sums(self):
        """Per (call path, location) of the send records and of the receive
        records: (sends, receives), each (cnode, location, records, records with a
        payload, bytes) int64 arrays, ascending by (cnode, location).  Summed once
        per analysis, in one pass over the events (over the whole trace, also in
        a window's analysis, which evaluates wait states only)."""
        def compute():
            return [tuple(np.frombuffer(col, dtype=np.int64) for col in side)
                    for side in _core.message_sums(self._trace._core, self.cnode)]
        sends, receives = self.memo("message_sums", compute)
        return sends, receives

    def collective_begins(self, ends: np.ndarray, calls: np.ndarray) -> np.ndarray:
        """The MPI_COLLECTIVE_BEGIN of each MPI_COLLECTIVE_END ends[k] inside the
        call calls[k] (its ENTER): the last BEGIN of its location before it and
        after the call; -1 when there is none (one pass over the events, in C)."""
        ends, calls = int64_array(ends), int64_array(calls)
        out = np.full(len(ends), -1, dtype=np.int64)
        if not len(ends) or not self.count_of_kind("MPI_COLLECTIVE_BEGIN"):
            return out
        order = np.argsort(ends, kind="stable")  # the pass visits them in the total order
        found = np.empty(len(ends), dtype=np.int64)
        _core.collective_begins(self._trace._core, int64_array(ends[order]),
                                int64_array(calls[order]), found)
        out[order] = found
        return out

    def collective_members(self, type: str, complete_only: bool = False
                           ) -> Tuple[np.ndarray, np.ndarray]:
        """(instance, member event) of every member of the EARL layer's
        collective instances of one type: "mpi" (members: MPI_COLLECTIVE_END
        events) or "omp_barrier" (members: the LEAVEs of the barrier regions).
        complete_only: the instances every member of the group completed.  The
        instances are those of ctx.states (coll_op, coll_root, coll_comm, ...)."""
        if type not in COLLECTIVE_TYPES:
            raise ValueError("no collective type %r (types: %s)"
                             % (type, ", ".join(COLLECTIVE_TYPES)))
        st = self.states
        start = st.coll_member_start.astype(np.int64)
        inst = np.repeat(np.arange(len(start) - 1), np.diff(start))
        members = st.coll_members.astype(np.int64)
        keep = st.coll_type[inst] == COLLECTIVE_TYPES[type]
        if complete_only:
            keep &= st.coll_complete[inst] >= 0
        return inst[keep], members[keep]

    # -- definitions ---------------------------------------------------------------------
    def metric_classes(self) -> Dict[int, Tuple["MetricMember", ...]]:
        """The metric classes of the definitions (the counters that METRIC
        records carry: events.metrics.metric is the class), by class reference:
        its members in record order (a record's value of member k is
        events.metric_values[first + k])."""
        def compute():
            d = self._trace._defs
            members, strings = d.metric_members, self._trace.strings

            def text(ref):
                return strings[ref] if 0 <= ref < len(strings) else ""

            out = {}
            for k, klass in enumerate(d.metric_classes):
                mem = []
                for m in klass[1]:
                    if m >= len(members) or not members[m][0]:
                        mem.append(None)
                        continue
                    _, name, descr, unit, vtype, mtype, mode, base, exp = members[m]
                    mem.append(MetricMember(m, text(name), text(descr), text(unit), vtype,
                                            mtype, mode, base, exp))
                out[k] = tuple(mem)
            return out
        return self.memo("metric_classes", compute)


@dataclass(frozen=True)
class MetricMember:
    """A counter of a metric class, as OTF2 defines it (OTF2_MetricMember)."""

    ref: int
    name: str
    description: str
    unit: str
    value_type: int    #: OTF2_Type (10: double, 1..8 integers)
    metric_type: int   #: OTF2_MetricType (1: PAPI, 2: rusage, 3: user, 0: other)
    mode: int          #: OTF2_MetricMode (0: accumulated start, ...)
    base: int
    exponent: int


def pair_forks_and_joins(ev, forks: np.ndarray, joins: np.ndarray) -> np.ndarray:
    """The join closing each fork: forks and joins nest per location like brackets."""
    out = np.full(len(forks), -1, dtype=np.int64)
    pos_of = {int(f): k for k, f in enumerate(forks)}
    marks = np.concatenate((forks, joins))
    is_fork = np.concatenate((np.ones(len(forks), bool), np.zeros(len(joins), bool)))
    order = np.lexsort((marks, ev.location[marks]))
    open_forks = {}
    for m, f in zip(marks[order].tolist(), is_fork[order].tolist()):
        loc = int(ev.location[m])
        stack = open_forks.setdefault(loc, [])
        if f:
            stack.append(m)
        elif stack:
            out[pos_of[stack.pop()]] = m
    return out
