"""P parts of one analysis in one process, each on a thread of its own, talking
through an in-memory Exchange: the collective logic of earlc.parts tested
without mpiexec (the tests of test_parts*.py under mpiexec check the same on
MPI).  The C work releases the GIL, so the parts overlap as processes would."""
import threading

import numpy as np

from earlc.parts.exchange import Exchange


class _Group:
    def __init__(self, n):
        self.n = n
        self.barrier = threading.Barrier(n)
        self.slots = [None] * n


class ThreadExchange(Exchange):
    """One part of a group of threads: every collective is two barriers around a
    shared list."""

    def __init__(self, group: _Group, rank: int):
        self.group, self.rank, self.size = group, rank, group.n

    def _every(self, obj):
        g = self.group
        g.barrier.wait()
        g.slots[self.rank] = obj
        g.barrier.wait()
        out = list(g.slots)
        g.barrier.wait()
        return out

    def alltoall_bytes(self, outgoing):
        every = self._every([bytes(b) for b in outgoing])
        return [every[q][self.rank] for q in range(self.size)]

    def alltoallv(self, send, counts):
        data = np.frombuffer(send, dtype=np.uint8)
        ends = np.cumsum(np.asarray(counts, dtype=np.int64))
        pieces = [data[e - c:e].copy() for e, c in zip(ends.tolist(), counts)]
        got = self.alltoall_bytes(pieces)
        return (np.frombuffer(b"".join(bytes(g) for g in got), dtype=np.uint8).copy(),
                np.array([len(g) for g in got], dtype=np.int64))

    def allgather(self, obj):
        return self._every(obj)

    def bcast(self, obj, root=0):
        return self._every(obj)[root]

    def allreduce_sum(self, values):
        every = self._every(np.asarray(values))
        return np.sum(every, axis=0).astype(np.asarray(values).dtype)

    def gather(self, obj, root=0):
        every = self._every(obj)
        return every if self.rank == root else None


def run_parts(n: int, fn):
    """fn(exchange) on n threads, one part each: the list of their results.  The
    first exception of any part is raised (the others are unblocked)."""
    group = _Group(n)
    results, errors = [None] * n, [None] * n

    def body(rank):
        try:
            results[rank] = fn(ThreadExchange(group, rank))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors[rank] = exc
            group.barrier.abort()

    threads = [threading.Thread(target=body, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None and not isinstance(e, threading.BrokenBarrierError):
            raise e
    for e in errors:
        if e is not None:
            raise e
    return results
