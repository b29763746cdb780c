"""The EARL layer: system states and pointer attributes of every event.

`trace.states` (built on first use, then cached) holds, as read-only numpy
arrays over the C store, one entry per event:

    enterptr   ENTER of the innermost region instance enclosing the event
               (a LEAVE: its own ENTER; an ENTER: the enclosing one); worker
               threads continue into their master's stack at the fork
    leaveptr   an ENTER's LEAVE
    sendptr    a receive's send (MPI_RECV, MPI_IRECV -> MPI_SEND, MPI_ISEND)
    recvptr    a send's receive
    lockptr    previous event that changed the same lock
    forkptr    the fork that opened the team of the event's thread
    coll_instance  collective instance of an MPI_COLLECTIVE_END or of the
               LEAVE of an OpenMP barrier, see `collectives`

All are event ids (int64), -1 for none, each computed on first access and
then kept (8 bytes an event each).  The pass itself keeps enterptr in 32 bits
(4 bytes an event); `enterptr_of(ids)` and `gather(name, ids)` read pointers
of chosen events without building an int64 array, which is what earlc's own
analyses do.  The history queries answer for the state just after event i
without replaying the trace (costs in docs/states.md):

    trace.stack(i, loc)       ENTER ids of loc's open regions, outermost first
    trace.queue(i, src, dst)  send ids of the messages in transfer from src to dst
    trace.coll(i)             member ids of the collective instance i completes
    trace.locks(i)            the locks changed so far, with their holder

`trace.event(i).enterptr.region.name`, `.sendptr`, ... read the pointers as
Event objects (None for none).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import weakref

import numpy as np

from . import _core, otf2names
from .events import KINDS, column, event_ids64

POINTERS = ("enterptr", "leaveptr", "sendptr", "recvptr", "lockptr", "forkptr")
WARNING_NAMES = _core.STATES_WARNING_NAMES
COLL_TYPES = ("MPI", "OMP_BARRIER")


def _loc(loc) -> int:
    """A location given as its dense index or as a Location."""
    return int(getattr(loc, "index", loc))


class StatesWarnings:
    """Inconsistencies found by the states pass, counted per code; `details` lists
    the first ones of each code as (code, location, event id, text)."""

    def __init__(self, raw: dict):
        self.counts: Dict[str, int] = raw["counts"]
        self.details = raw["details"]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:
        return self.total > 0

    def __repr__(self) -> str:
        return "StatesWarnings(%s)" % {k: v for k, v in self.counts.items() if v}

    def to_dataframe(self):
        import pandas as pd

        return pd.DataFrame(self.details, columns=["code", "location", "event", "detail"])


@dataclass(frozen=True)
class Collective:
    """One collective instance: an MPI collective on a communicator, or one
    barrier of a thread team.  `members` are its MPI_COLLECTIVE_END events (or
    barrier LEAVEs) in the total order; `complete` the event completing it."""

    id: int
    type: str
    communicator: int          # MPI: communicator ref; OpenMP: team ref
    fork: Optional[int]        # OpenMP: the fork of the team
    operation: Optional[str]
    root: Optional[int]        # location of the root
    expected: int
    members: List[int]
    complete: Optional[int]

    @property
    def is_complete(self) -> bool:
        return self.complete is not None


@dataclass(frozen=True)
class LockState:
    process: int               # location group ref
    model: str                 # paradigm
    id: int                    # lock id
    last: int                  # last event that changed it
    holder: Optional[int]      # location holding it, None when free


class States:
    """Pointer attributes and collective instances of a trace (see the module doc)."""

    def __init__(self, trace, omp_barriers: bool = True, threads: Optional[int] = None,
                 calltree: bool = False):
        """threads: for the pass (0: one per core); by default as many as the trace
        was opened with.  The result does not depend on it.  calltree: walk the
        call tree on the way, for the first earlc.calltree.CallTree of these
        states to take (the same tree it would build)."""
        # weak: the trace caches its States, and a cycle would hold both stores
        # until the garbage collector runs
        self._trace_ref = weakref.ref(trace)
        if threads is None:
            threads = trace.threads
        self._core = _core.States(trace._core, omp_barriers=omp_barriers, threads=threads,
                                  calltree=calltree)
        c = self._core
        self._dense: Dict[str, np.ndarray] = {}
        #: the pass's enterptr: uint32, events.EID32_NONE for none (no copy)
        self._enterptr32 = column(c, "enterptr32", "I")
        self.coll_type = column(c, "coll.type", "B")
        self.coll_comm = column(c, "coll.comm", "I")
        self.coll_fork = column(c, "coll.fork", "q")
        self.coll_op = column(c, "coll.op", "B")
        self.coll_root = column(c, "coll.root", "i")
        self.coll_expected = column(c, "coll.expected", "I")
        self.coll_complete = column(c, "coll.complete", "q")
        self.coll_member_start = column(c, "coll.member_start", "Q")
        self.coll_members = column(c, "coll.members", "q")
        self.warnings = StatesWarnings(c.warnings())

    def __len__(self) -> int:
        return len(self._core)

    def _array(self, name: str, fmt: str) -> np.ndarray:
        if name not in self._dense:
            self._dense[name] = column(self._core, name, fmt)
        return self._dense[name]

    # built in C on first access: enterptr widened from the pass's 32 bits,
    # the others from the pass's compact records
    enterptr = property(lambda self: self._array("enterptr", "q"),
                        doc="ENTER of the enclosing region instance (int64 copy, made on first "
                            "access; enterptr_of reads chosen events without it)")
    leaveptr = property(lambda self: self._array("leaveptr", "q"), doc="LEAVE of an ENTER")
    sendptr = property(lambda self: self._array("sendptr", "q"), doc="send of a receive")
    recvptr = property(lambda self: self._array("recvptr", "q"), doc="receive of a send")
    lockptr = property(lambda self: self._array("lockptr", "q"), doc="previous event on the same lock")
    forkptr = property(lambda self: self._array("forkptr", "q"), doc="fork of the event's team")
    coll_instance = property(lambda self: self._array("coll_instance", "i"),
                             doc="collective instance of a member event")

    @property
    def n_collectives(self) -> int:
        return len(self.coll_type)

    def members(self, k: int) -> np.ndarray:
        """Member events of collective instance k."""
        return self.coll_members[int(self.coll_member_start[k]):int(self.coll_member_start[k + 1])]

    def collective(self, k: int) -> Collective:
        """Collective instance k."""
        k = int(k)
        typ = COLL_TYPES[int(self.coll_type[k])]
        fork, root, done = int(self.coll_fork[k]), int(self.coll_root[k]), int(self.coll_complete[k])
        return Collective(
            id=k, type=typ, communicator=int(self.coll_comm[k]),
            fork=fork if fork >= 0 else None,
            operation=otf2names.name(otf2names.COLLECTIVE_OPS, int(self.coll_op[k])),
            root=root if root >= 0 else None, expected=int(self.coll_expected[k]),
            members=[int(e) for e in self.members(k)], complete=done if done >= 0 else None)

    def collectives(self) -> List[Collective]:
        return [self.collective(k) for k in range(self.n_collectives)]

    def instance_of(self, i: int) -> Optional[Collective]:
        """The collective instance event i belongs to (any member), or None."""
        k = int(self._core.instance_of(int(i)))
        return self.collective(k) if k >= 0 else None

    # -- history queries ----------------------------------------------------------
    def stack(self, i: int, loc) -> List[int]:
        return list(self._core.stack(int(i), _loc(loc)))

    def queue(self, i: int, src, dst) -> List[int]:
        return list(self._core.queue(int(i), _loc(src), _loc(dst)))

    def coll(self, i: int) -> List[int]:
        return list(self._core.coll(int(i))[1])

    def locks(self, i: int) -> List[LockState]:
        return [LockState(p, otf2names.name(otf2names.PARADIGMS, m), lid, last,
                          holder if holder >= 0 else None)
                for p, m, lid, last, holder in self._core.locks(int(i))]

    def memory(self) -> int:
        """Heap bytes held by the states."""
        return self._core.memory()

    def enterptr_of(self, ids):
        """enterptr of the events ids, as `enterptr[ids]` gives it (int64, -1 for
        none; ids index as numpy indexes: arrays, masks, one id), read from the
        pass's 32-bit array: the int64 `enterptr` is not built."""
        return event_ids64(self._enterptr32[ids])[()]  # one id: a scalar, as enterptr[i]

    def gather(self, name: str, ids) -> np.ndarray:
        """Pointer `name` of each event id in ids (-1 for none), computed for those
        events only: cheaper than the dense array when few events are asked about."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        return np.frombuffer(self._core.gather(name, ids), dtype=np.int64)

    def pointer(self, name: str, i: int):
        """Pointer `name` of event i as an Event, None for none."""
        j = self._core.pointer(name, int(i))
        return self._trace_ref().event(j) if j >= 0 else None

    def to_dataframe(self):
        import pandas as pd

        d = {name: getattr(self, name) for name in POINTERS}
        d["coll_instance"] = self.coll_instance
        return pd.DataFrame(d)

    def __repr__(self) -> str:
        return "<earlc.States: %d events, %d collective instances, %s>" % (
            len(self), self.n_collectives, self.warnings)


def open_regions(trace, locations: Sequence[int], before: int) -> Tuple[np.ndarray, np.ndarray]:
    """The ENTERs of the regions open on each location after its last event with
    an id below `before`, innermost first per location: (enters, location)."""
    ev = trace.events
    enterptr_of = trace.states.enterptr_of
    loc_of = ev.location
    enter_kind, leave_kind = KINDS["ENTER"], KINDS["LEAVE"]
    out, where = [], []
    for loc in locations:
        ids = ev.of_location(loc)
        p = int(np.searchsorted(ids, before))  # ids of a location grow with time
        if p == 0:
            continue
        q = int(ids[p - 1])
        k = int(ev.kind[q])
        e = q if k == enter_kind else int(enterptr_of(q))
        if k == leave_kind and e >= 0:
            e = int(enterptr_of(e))  # a LEAVE's enterptr is its own, closed, ENTER
        while e >= 0 and int(loc_of[e]) == loc:
            out.append(e)
            where.append(loc)
            e = int(enterptr_of(e))
    return np.asarray(out, dtype=np.int64), np.asarray(where, dtype=np.int64)
