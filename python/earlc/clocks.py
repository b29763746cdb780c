"""Vector timestamps and the happened-before order of a trace.

`a --> b` (a happened before b) is the transitive closure of program order on
each location, messages (send before receive), MPI collectives by the shape of
the operation, thread forks and joins, OpenMP team barriers and lock hand-overs
(docs/patterns.md gives the rules).  earlc stamps the events a question needs
with Fidge/Mattern vector timestamps in one replay of the trace in dependency
order, after which `a --> b` is a constant-time test:

    clocks = trace.vector_clocks(ids)      # stamp these events
    clocks.stamps                          # (len(ids), locations) uint32
    clocks.happened_before(a, b)           # vectorised over event ids
    trace.happened_before(a, b)            # the same, stamping what it needs
    trace.concurrent(a, b)

Entry l of an event's stamp is the number of events of location l that happened
before the event or are the event.  Memory is events x locations x 4 bytes, so
stamp what the question needs; `clocks.bytes` reports it.

Of a part of a trace (earlc.open(path, parts="mpi")) the stamps are the whole
trace's: every MPI process replays its own locations and they pass each other
the clocks that cross (earlc.parts.replay).  Stamping is then collective: every
process calls vector_clocks (or happened_before, concurrent) at the same point,
each with ids of its own part (own events or ghosts).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import _core


def _ids(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def sorted_unique(ids: np.ndarray) -> np.ndarray:
    """ids sorted, without repeats: as they come when they are so already (the
    usual case: ids from np.nonzero), which costs a comparison instead of a sort."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    if len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1])):
        return ids
    ids = np.sort(ids)  # a sort and a comparison: faster than np.unique's hashing
    return ids[np.concatenate(([True], ids[1:] != ids[:-1]))]


class VectorClocks:
    """Vector timestamps of a set of events of one trace (sorted, distinct)."""

    def __init__(self, trace, ids, threads: Optional[int] = None, progress=None):
        ids = sorted_unique(ids)
        n = len(trace)
        bad = ids[(ids < 0) | (ids >= n)]
        error = IndexError("event %d is not an event of this trace (it has %d events)"
                           % (int(bad[0]), n)) if len(bad) else None
        if trace.part is not None:  # collective: every part ends with the same error
            trace.part.exchange.agree(error)
        elif error is not None:
            raise error
        self.trace = trace
        self.events = ids
        #: of a part of a trace (earlc.parts): what the replay in parts cost
        self.replay = None
        if trace.part is not None:
            from .parts.replay import stamps_of

            ids, loc, pos, stamps, self.replay = stamps_of(trace.part, ids, threads=threads,
                                                           progress=progress)
            self._core = _core.clocks_from_stamps(stamps.shape[1], ids, loc,
                                                  pos.astype(np.uint32), stamps.ravel())
            cycles = self.replay.cycles_broken
        else:
            self._core = _core.VectorClocks(trace.states._core, ids.tobytes(),
                                            threads=trace.threads if threads is None else threads,
                                            progress=progress)
            cycles = None
        info = self._core.info()
        self.width = info["width"]
        #: heap bytes of the stamps and their index
        self.bytes = info["bytes"]
        #: dependencies that could not be honoured (cycles of an inconsistent trace)
        self.cycles_broken = info["cycles_broken"] if cycles is None else cycles
        self.location = np.empty(len(ids), dtype=np.int32)
        self.position = np.empty(len(ids), dtype=np.uint32)
        self._core.places(self.location, self.position)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def stamps(self) -> np.ndarray:
        """(events, locations) uint32, read-only, no copy."""
        flat = np.frombuffer(self._core.stamps(), dtype=np.uint32)
        return flat.reshape(len(self.events), self.width)

    def index(self, ids) -> np.ndarray:
        """Row of each event id among the stamped events; KeyError if one is not stamped."""
        ids = np.atleast_1d(_ids(ids))
        k = np.searchsorted(self.events, ids)
        found = k < len(self.events)
        found[found] = self.events[k[found]] == ids[found]
        if not found.all():
            raise KeyError("event %d is not stamped" % int(ids[~found].flat[0]))
        return k

    def _compare(self, a, b, concurrent: bool):
        a, b = np.broadcast_arrays(_ids(a), _ids(b))
        ia = np.ascontiguousarray(self.index(a.ravel()), dtype=np.int64)
        ib = np.ascontiguousarray(self.index(b.ravel()), dtype=np.int64)
        out = np.empty(ia.size, dtype=np.uint8)
        self._core.compare(ia, ib, out, concurrent)
        res = out.view(bool).reshape(a.shape)
        return bool(res) if res.ndim == 0 else res

    def happened_before(self, a, b):
        """a --> b for event ids (scalars or arrays that broadcast)."""
        return self._compare(a, b, False)

    def concurrent(self, a, b):
        """a || b: distinct events, neither happened before the other."""
        return self._compare(a, b, True)

    def __repr__(self) -> str:
        return "<earlc.VectorClocks %d events x %d locations, %d bytes>" % (
            len(self.events), self.width, self.bytes)
