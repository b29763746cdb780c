"""Small MPI runs written call by call, in the order they happened, as OTF2 traces.

Each call gets ticks of its own from one global clock, so every location's times
increase and a send always precedes its receive; the call's region (MPI_Send,
MPI_Recv, ...) encloses its record, as Score-P writes it.  Calls return a name under
which `ScriptTrace.id(name)` finds the record's event id in the written trace.
"""
from __future__ import annotations

import numpy as np

import earlc

KINDS = earlc.events.KINDS


class Script:
    def __init__(self, ranks: int, main: str = "main"):
        self.ranks = ranks
        self.main = main
        self.t = 0
        self.calls = []          # (fn(writer)) in order
        self.records = {}        # name -> (rank, kind, time)
        self._requests = {}      # (rank, request) -> (kind, source/dest, tag)
        self._next_request = 1
        self._names = 0

    def _name(self, name):
        if name is None:
            self._names += 1
            name = "#%d" % self._names
        if name in self.records:
            raise ValueError("name %r used twice" % name)
        return name

    def _call(self, rank, region, kind, record, name, user=None):
        t = self.t = self.t + 10
        name = self._name(name)
        self.records[name] = (rank, kind, t + 1)

        def write(w):
            if user:
                w.enter(rank, t - 1, user)
            w.enter(rank, t, region)
            record(w, t + 1)
            w.leave(rank, t + 2, region)
            if user:
                w.leave(rank, t + 3, user)
        self.calls.append(write)
        return name

    # point to point ------------------------------------------------------------------
    def send(self, src, dst, tag=0, sync=False, name=None, user=None):
        return self._call(src, "MPI_Ssend" if sync else "MPI_Send", "MPI_SEND",
                          lambda w, t: w.send(src, t, dest=dst, tag=tag), name, user)

    def recv(self, dst, src, tag=0, name=None, user=None):
        """A blocking receive that took the message of rank src."""
        return self._call(dst, "MPI_Recv", "MPI_RECV",
                          lambda w, t: w.recv(dst, t, source=src, tag=tag), name, user)

    def isend(self, src, dst, tag=0, sync=False, name=None, user=None):
        """Returns (name, request) for wait_send."""
        req = self._next_request
        self._next_request += 1
        n = self._call(src, "MPI_Issend" if sync else "MPI_Isend", "MPI_ISEND",
                       lambda w, t: w.isend(src, t, dest=dst, request=req, tag=tag), name, user)
        return n, req

    def wait_send(self, src, req, name=None):
        return self._call(src, "MPI_Wait", "MPI_ISEND_COMPLETE",
                          lambda w, t: w.isend_complete(src, t, request=req), name)

    def irecv(self, dst, name=None, user=None):
        """Posts a receive; returns (name of the posting record, request)."""
        req = self._next_request
        self._next_request += 1
        n = self._call(dst, "MPI_Irecv", "MPI_IRECV_REQUEST",
                       lambda w, t: w.irecv_request(dst, t, request=req), name, user)
        return n, req

    def wait_recv(self, dst, req, src, tag=0, name=None, region="MPI_Wait"):
        """The completion of a posted receive, which took the message of rank src."""
        return self._call(dst, region, "MPI_IRECV",
                          lambda w, t: w.irecv(dst, t, source=src, request=req, tag=tag), name)

    # collectives ------------------------------------------------------------------------
    def collective(self, region="MPI_Barrier", ranks=None, root=None, name=None):
        ranks = list(range(self.ranks)) if ranks is None else list(ranks)
        t = self.t = self.t + 10
        name = self._name(name)
        self.records[name] = (ranks[0], "MPI_COLLECTIVE_END", t + 3)

        def write(w):
            for r in ranks:
                w.collective(r, t, t + 4, region, root=root)
        self.calls.append(write)
        self.t += 4
        return name

    def barrier(self, ranks=None, name=None):
        return self.collective("MPI_Barrier", ranks, name=name)

    def other(self, rank, region, name=None):
        """A call with no MPI records inside (MPI_Waitany, MPI_Comm_dup, ...)."""
        t = self.t = self.t + 10
        name = self._name(name)
        self.records[name] = (rank, "ENTER", t)
        self.calls.append(lambda w: w.region_span(rank, t, t + 2, region))
        return name

    # writing ------------------------------------------------------------------------------
    def write(self, path) -> "ScriptTrace":
        end = self.t + 20
        with earlc.TraceWriter(path, ranks=self.ranks) as w:
            for r in range(self.ranks):
                w.enter(r, 0, self.main)
            for call in self.calls:
                call(w)
            for r in range(self.ranks):
                w.leave(r, end, self.main)
        return ScriptTrace(earlc.open(path), self.records)


class ScriptTrace:
    def __init__(self, trace, records):
        self.trace = trace
        self.records = records
        ev = trace.events
        self._loc = {l.rank: l.index for l in trace.locations if l.thread == 0}
        self._ids = {}
        for name, (rank, kind, time) in records.items():
            ids = np.nonzero((ev.location == self._loc[rank]) & (ev.kind == KINDS[kind])
                             & (ev.time == time))[0]
            assert len(ids) == 1, (name, rank, kind, time)
            self._ids[name] = int(ids[0])

    def id(self, name) -> int:
        return self._ids[name]

    def name(self, event) -> str:
        for n, i in self._ids.items():
            if i == event:
                return n
        return "#?%d" % event


def pairs(script_trace, races):
    """{(receive name, send name)} of a Races result."""
    df = races.to_dataframe()
    return {(script_trace.name(int(r)), script_trace.name(int(s)))
            for r, s in zip(df["recv"], df["send"])}


def lamport_pairs(script_trace, races):
    df = races.to_dataframe()
    return {(script_trace.name(int(r)), script_trace.name(int(s)))
            for r, s, l in zip(df["recv"], df["send"], df["lamport"]) if l}
