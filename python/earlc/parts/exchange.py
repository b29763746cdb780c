"""How the parts of one analysis talk: one process (Serial), or the processes
of an MPI job (through mpi4py, built against the system's MPI).

Every method is collective: each part calls the same methods in the same
order.  A part that fails must still take part in the next exchange, so that
the others learn it: `agree` turns the first failure (by part) into the same
error on every part, and the analysis ends everywhere with one message
instead of a hang of the others.
"""
from __future__ import annotations

import os
import pickle
import time
from typing import Any, List, Optional, Sequence

import numpy as np

from .._core import Error


class PartsFailed(Error, RuntimeError):
    """A failure of one part, raised on every part (see Exchange.agree).
    `kind` names the exception type the failing part raised, `part` its rank,
    `user` says whether it was an earlc.Error (the user's doing, not a bug)."""

    def __init__(self, message: str, kind: str = "", part: int = 0, user: bool = False):
        super().__init__(message)
        self.kind, self.part, self.user = kind, part, user


class Exchange:
    """The parts of one analysis: `rank` is this part, `size` their number."""

    rank = 0
    size = 1

    def alltoall_bytes(self, outgoing: Sequence[bytes]) -> List[bytes]:
        """outgoing[p] goes to part p; returns what each part sent here."""
        raise NotImplementedError

    def alltoallv(self, send, counts: np.ndarray):
        """Bytes [offset[p], offset[p] + counts[p]) of the buffer send go to part p
        (the segments in part order, back to back); returns (one uint8 array of
        what every part sent here, in part order, the byte count from each).  No
        copy of the send buffer is made."""
        raise NotImplementedError

    def allgather(self, obj: Any) -> List[Any]:
        raise NotImplementedError

    def round(self, outgoing: Sequence[bytes], status: np.ndarray):
        """One round of a replay in parts: outgoing[p] goes to part p, and the
        int64 `status` arrays of all parts are summed.  Returns (what each part
        sent here, the sum).  The same as alltoall_bytes and allreduce_sum, in
        fewer messages where the exchange can."""
        return self.alltoall_bytes(outgoing), self.allreduce_sum(status)

    def bcast(self, obj: Any, root: int = 0) -> Any:
        raise NotImplementedError

    def gather(self, obj: Any, root: int = 0) -> Optional[List[Any]]:
        """Every part's obj on part `root` (in part order), None elsewhere."""
        raise NotImplementedError

    def allreduce_sum(self, values: np.ndarray) -> np.ndarray:
        """Element-wise sum of an int64 or float64 array over the parts."""
        raise NotImplementedError

    def agree(self, error: Optional[BaseException]) -> None:
        """Collective: raise on every part if any part failed (its error, or
        None).  The first failing part's message is everybody's, so that every
        process ends with the same words; the failing part re-raises its own
        exception (with its traceback) when it is the first."""
        verdicts = self.allgather(None if error is None else
                                  (type(error).__name__, _message(error),
                                   isinstance(error, Error)))
        for part, v in enumerate(verdicts):
            if v is not None:
                if part == self.rank and error is not None:
                    raise error
                raise PartsFailed(v[1], v[0], part, v[2])

    @property
    def is_root(self) -> bool:
        return self.rank == 0


def _message(error: BaseException) -> str:
    text = str(error)
    return text if text else type(error).__name__


class Serial(Exchange):
    """One part: every exchange is with itself."""

    def alltoall_bytes(self, outgoing):
        return [outgoing[0]]

    def alltoallv(self, send, counts):
        data = np.frombuffer(send, dtype=np.uint8)[:int(counts[0])]
        return data.copy(), np.asarray(counts[:1], dtype=np.int64)

    def allgather(self, obj):
        return [obj]

    def bcast(self, obj, root=0):
        return obj

    def gather(self, obj, root=0):
        return [obj]

    def allreduce_sum(self, values):
        return np.asarray(values).copy()

    def agree(self, error):
        if error is not None:
            raise error


class MPIExchange(Exchange):
    """The processes of an MPI communicator (mpi4py's COMM_WORLD by default).

    Every collective is started non-blocking and waited for by `_wait`, which
    polls and sleeps between polls: MPI libraries busy-poll in a blocking call
    (Debian's MPICH offers no setting against it, docs/record.md), which with
    more processes than cores keeps the cores from the processes that have work
    to do.  A process that waits sleeps instead, so a collective costs about a
    scheduler tick, not a time slice of every busy waiter."""

    #: bytes per message of the large exchanges; MPI counts are ints
    CHUNK = 1 << 30
    #: polls before the first sleep, and the longest sleep (seconds)
    SPINS, LONGEST_SLEEP = 20, 0.002

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def _wait(self, request) -> None:
        spins, pause = 0, 1e-5
        while not request.Test():
            spins += 1
            if spins > self.SPINS:
                time.sleep(pause)
                pause = min(pause * 2, self.LONGEST_SLEEP)

    def _counts(self, counts: np.ndarray) -> np.ndarray:
        """Every part's counts for this part (an alltoall of one int64 each)."""
        got = np.empty(self.size, dtype=np.int64)
        self._wait(self.comm.Ialltoall(np.ascontiguousarray(counts, dtype=np.int64), got))
        return got

    def alltoall_bytes(self, outgoing):
        send = [np.frombuffer(memoryview(b).cast("B"), dtype=np.uint8) for b in outgoing]
        counts = np.array([len(b) for b in send], dtype=np.int64)
        rbuf, recv_counts = self.alltoallv(np.concatenate(send) if send else
                                           np.empty(0, np.uint8), counts)
        rdis = np.concatenate(([0], np.cumsum(recv_counts)[:-1]))
        return [rbuf[rdis[p]:rdis[p] + recv_counts[p]].tobytes() for p in range(self.size)]

    def alltoallv(self, send, counts):
        from mpi4py import MPI

        sbuf = np.frombuffer(send, dtype=np.uint8)
        counts = np.ascontiguousarray(counts, dtype=np.int64)
        recv_counts = self._counts(counts)
        sdis = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        rdis = np.concatenate(([0], np.cumsum(recv_counts)[:-1])).astype(np.int64)
        rbuf = np.empty(int(recv_counts.sum()), dtype=np.uint8)
        if max(int(counts.sum()), int(recv_counts.sum())) < self.CHUNK:
            self._wait(self.comm.Ialltoallv(
                [sbuf, counts.astype(np.int32), sdis.astype(np.int32), MPI.BYTE],
                [rbuf, recv_counts.astype(np.int32), rdis.astype(np.int32), MPI.BYTE]))
            return rbuf, recv_counts
        # large: pairwise, in chunks that MPI's int counts can say, each pair in a
        # fixed order (no deadlock)
        for step in range(self.size):
            dest, src = (self.rank + step) % self.size, (self.rank - step) % self.size
            out = sbuf[sdis[dest]:sdis[dest] + counts[dest]]
            into = rbuf[rdis[src]:rdis[src] + recv_counts[src]]
            for at in range(0, max(len(out), len(into), 1), self.CHUNK):
                for r in (self.comm.Isend([out[at:at + self.CHUNK], MPI.BYTE], dest, 17),
                          self.comm.Irecv([into[at:at + self.CHUNK], MPI.BYTE], src, 17)):
                    self._wait(r)
        return rbuf, recv_counts

    def allgather(self, obj):
        from mpi4py import MPI

        data = np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)
        sizes = np.empty(self.size, dtype=np.int64)
        self._wait(self.comm.Iallgather(np.array([len(data)], np.int64), sizes))
        if sizes.sum() >= self.CHUNK:  # too large for MPI's int counts: one by one
            return [pickle.loads(b) for b in self.alltoall_bytes([data.tobytes()] * self.size)]
        rbuf = np.empty(int(sizes.sum()), dtype=np.uint8)
        displ = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        self._wait(self.comm.Iallgatherv(data, [rbuf, sizes.astype(np.int32),
                                                displ.astype(np.int32), MPI.BYTE]))
        return [pickle.loads(rbuf[displ[p]:displ[p] + sizes[p]].tobytes())
                for p in range(self.size)]

    #: bytes per destination that a round carries with its counts (the clocks
    #: of a few events of a trace of tens of locations): INLINE up to 16
    #: parts, 16384 / parts beyond, none beyond 2048 parts
    INLINE = 1024

    def round(self, outgoing, status):
        """The counts of the byte exchange carry every part's status and, when
        every part's bytes for each destination are few (INLINE), the bytes
        themselves: one Alltoall, and an Alltoallv only when a part sends more.
        A replay makes thousands of rounds, and between oversubscribed
        processes each collective costs turns of the scheduler; a process that
        waits for the others gives up its core meanwhile (_wait)."""
        from mpi4py import MPI

        status = np.asarray(status, dtype=np.int64)
        send = [np.frombuffer(memoryview(b).cast("B"), dtype=np.uint8) for b in outgoing]
        counts = np.array([len(b) for b in send], dtype=np.int64)
        large = counts.max(initial=0) >= self.CHUNK or counts.sum() >= self.CHUNK
        inline = min(self.INLINE, 16384 // self.size) // 8 * 8
        fits = counts.max(initial=0) <= inline
        head = 4 + len(status)
        # rows of one width on every part (inline depends on the parts only)
        row = np.zeros((self.size, head + inline // 8), dtype=np.int64)
        row[:, 0] = counts
        row[:, 1] = counts.sum()
        row[:, 2] = large
        row[:, 3] = not fits
        row[:, 4:head] = status
        if fits:
            payload = row[:, head:].view(np.uint8)
            for q, b in enumerate(send):
                payload[q, :len(b)] = b
        got = np.empty_like(row)
        _wait(self.comm.Ialltoall(row, got))
        recv_counts = got[:, 0]
        sent, large, spilled = got[:, 1].sum(), got[:, 2].sum(), got[:, 3].sum()
        total = got[:, 4:head].sum(axis=0)
        if large or sent >= self.CHUNK:  # every part decides alike (sent bounds what one gets)
            return self.alltoall_bytes(outgoing), total
        if not sent:
            return [b""] * self.size, total
        if not spilled:  # every part's bytes came with the counts
            payload = got[:, head:].view(np.uint8)
            return [payload[q, :int(recv_counts[q])].tobytes() for q in range(self.size)], total
        sbuf = np.concatenate(send) if send else np.empty(0, np.uint8)
        rbuf = np.empty(int(recv_counts.sum()), dtype=np.uint8)
        sdis = np.concatenate(([0], np.cumsum(counts)[:-1]))
        rdis = np.concatenate(([0], np.cumsum(recv_counts)[:-1]))
        _wait(self.comm.Ialltoallv([sbuf, counts.astype(np.int32), sdis.astype(np.int32),
                                    MPI.BYTE],
                                   [rbuf, recv_counts.astype(np.int32), rdis.astype(np.int32),
                                    MPI.BYTE]))
        return [rbuf[rdis[p]:rdis[p] + recv_counts[p]].tobytes() for p in range(self.size)], total

    def bcast(self, obj, root=0):
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL) if self.rank == root else b""
        return pickle.loads(self.alltoall_bytes([data] * self.size)[root])

    def gather(self, obj, root=0):
        return self.comm.gather(obj, root=root)

    def allreduce_sum(self, values):
        from mpi4py import MPI

        values = np.ascontiguousarray(values)
        out = np.empty_like(values)
        self._wait(self.comm.Iallreduce(values, out, op=MPI.SUM))
        return out


def _wait(request) -> None:
    """Wait for a non-blocking MPI operation, giving up the core while it is
    not done.  MPICH busy-polls inside a blocking collective, and none of its
    settings makes it yield; with more processes than cores (or a loaded
    machine) the process that is waited for then cannot run until the
    scheduler preempts the poller.  Measured with 4 processes on 2 cores: a
    small Alltoall took 16 ms blocking, 4 ms with this loop; with 2 processes
    on 2 cores both take about 45 us."""
    give_up = getattr(os, "sched_yield", None) or (lambda: time.sleep(0))
    while not request.Test():
        give_up()


def mpi_world_size() -> Optional[int]:
    """The number of processes of the MPI job this process was started in
    (by mpiexec: MPICH's Hydra, Open MPI, PMIx), None when not under one.
    Read from the launcher's environment, without loading MPI."""
    for name in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"):
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return None


def mpi_world_rank() -> int:
    """This process's rank in its MPI job (0 when not under one), from the
    launcher's environment."""
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return 0


class MPIUnavailable(Error, RuntimeError):
    """Started by mpiexec with several processes, but no usable MPI binding."""


def mpi_exchange() -> Exchange:
    """The exchange of this process's MPI job: Serial when not started by
    mpiexec (or with one process), else MPI's COMM_WORLD through mpi4py.
    MPIUnavailable when mpiexec started several processes and mpi4py cannot be
    loaded: one line that says what to install."""
    size = mpi_world_size()
    if not size or size < 2:
        return Serial()
    try:
        from mpi4py import MPI
    except Exception as exc:  # ImportError, or a library mismatch (OSError, RuntimeError)
        raise MPIUnavailable(
            "mpiexec started %d processes, but the MPI binding mpi4py cannot be loaded (%s): "
            "install it built against this MPI (pip install --no-binary mpi4py mpi4py), or run "
            "earlc without mpiexec" % (size, str(exc).splitlines()[0] if str(exc) else
                                       type(exc).__name__)) from None
    return MPIExchange(MPI.COMM_WORLD)


def dumps(obj) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


__all__ = ["Exchange", "Serial", "MPIExchange", "PartsFailed", "MPIUnavailable",
           "mpi_world_size", "mpi_world_rank", "mpi_exchange"]
