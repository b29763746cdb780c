"""The race analysis of a trace in parts: the whole trace's message races, the
same receives with the same alternatives in the same order, for any number of
parts (docs/races.md, "In parts"; csrc/races/earl_races.h, "the race analysis of
a part").

1. The wildcard receives are chosen as for the whole trace (earlc.races._select:
   what the whole trace records decides), and the MPI locations of the whole
   trace get a vector entry each.
2. Each part replays its own locations in the matches-before order; the clocks
   that cross parts travel between them (earlc.parts.replay.RaceReplay): a send's
   clock to its receiver's part (also of a send no receive took, for the race
   test), the receiver's clock after a synchronous send back to the sender's, a
   collective member's clock at its begin to the other members' parts.
3. Each part finds the alternatives of its own wildcard receives (every send to
   an own location is its own or a ghost with the clock its sender had) and the
   findings of its own locations.
4. The parts' results are said in the whole trace's event ids, with what a
   report shows of each event (location, time, tag, call path: a ghost's from
   its owner), and merged: receives with most alternatives first, ties in event
   order, as the whole trace's analysis orders them.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from .. import _core
from ..clocks import sorted_unique
from ..events import KINDS
from ..races import Finding, Races, _select
from .replay import REQUEST, RaceReplay, drive, held_events_at

#: what a report shows of an event, from the part that holds it whole
ATTRIBUTES = np.dtype([("event", "<i8"), ("location", "<i4"), ("time", "<u8"),
                       ("tag", "<i8")])

#: the kinds that give a location a vector entry: those with a row of the
#: message or the collective table (csrc/races/races_replay.c, setup)
_CLOCKED_KINDS = [KINDS[n] for n in ("MPI_SEND", "MPI_ISEND", "MPI_ISEND_COMPLETE",
                                     "MPI_IRECV_REQUEST", "MPI_IRECV", "MPI_RECV",
                                     "MPI_REQUEST_TEST", "MPI_REQUEST_CANCELLED",
                                     "MPI_COLLECTIVE_END")]


def _agreed(ex, fn):
    error, result = None, None
    try:
        result = fn()
    except Exception as exc:  # every part learns of it
        error = exc
    ex.agree(error)
    return result


def clocked_locations(trace) -> np.ndarray:
    """Collective: per location, whether it has MPI records in the whole trace
    (a vector entry of its own in the race replay): its owner says."""
    part = trace.part
    ev = trace.events
    mine = np.zeros(len(trace.locations), dtype=np.int64)
    has = np.isin(ev.kind, _CLOCKED_KINDS)
    locs = np.flatnonzero(np.bincount(ev.location[has], minlength=len(mine)))
    locs = locs[part.own[locs]] if len(locs) else locs
    mine[locs] = 1
    return (part.exchange.allreduce_sum(mine) > 0).astype(np.uint8)


def _attributes(local, ids: np.ndarray):
    """ATTRIBUTES (event: the part's id) and call paths of own events."""
    ev = local.trace.events
    out = np.empty(len(ids), dtype=ATTRIBUTES)
    out["event"] = ids
    out["location"] = ev.location[ids]
    out["time"] = ev.time[ids]
    ref = ev.ref_of(ids) if len(ids) else np.empty(0, np.int64)
    out["tag"] = np.where(ref >= 0, ev.messages.tag[np.maximum(ref, 0)].astype(np.int64), -1) \
        if len(ids) else []
    return out, [local.callpath(int(e)) for e in ids]


def races(trace, wildcard, clocks: str, progress, root: Optional[int]):
    """Collective: the whole trace's races (earlc.races.Races) on every part, or on
    part `root` only (None elsewhere)."""
    part = trace.part
    ex = part.exchange
    if callable(wildcard):  # the caller's code may fail on one part only
        source, tag, assumption = _agreed(ex, lambda: _select(trace, wildcard))
    else:  # its errors are the same on every part
        source, tag, assumption = _select(trace, wildcard)
    clocked = clocked_locations(trace)
    core = _agreed(ex, lambda: _core.PartRaces(
        trace._core, trace.states._core, requested_source=source, requested_tag=tag,
        lamport=clocks == "lamport", clocked=clocked, progress=progress if ex.is_root else None))
    result, stats = drive(part, lambda: RaceReplay(part, core))
    local = Races(trace, result, assumption)
    piece = _piece(local, part)
    every = ex.allgather(piece) if root is None else ex.gather(piece, root=root)
    if every is None:
        return None
    return MergedRaces(trace, every, assumption, stats)


def _piece(local, part) -> dict:
    """Collective: what this part found, in the whole trace's ids, with what the
    report shows of every event it names."""
    ex = part.exchange
    ev = local.trace.events
    finding_events = np.array([f.event for f in local.findings], dtype=np.int64)
    took = local.recv_send[local.recv_send >= 0]
    refs = sorted_unique(np.concatenate([local.recv, local.recv_posted, took, local.alt_send,
                                         finding_events]).astype(np.int64))
    own = part.own[ev.location[refs]] if len(refs) else np.zeros(0, bool)
    # what a report shows of a ghost comes from its owner
    ghosts = refs[~own]
    owner = part.partition.part_of[ev.location[ghosts]] if len(ghosts) else np.empty(0, np.int64)
    asks = np.zeros(len(ghosts), dtype=REQUEST)
    asks["location"], asks["position"] = ev.location[ghosts], part.positions(ghosts)
    incoming = ex.alltoall_bytes([asks[owner == q].tobytes() for q in range(ex.size)])
    replies = []
    for buf in incoming:
        asked = np.frombuffer(buf, dtype=REQUEST)
        replies.append(_attributes(local, held_events_at(part, asked["location"],
                                                         asked["position"])))
    answers = ex.alltoall_bytes([_pack(r) for r in replies])
    attrs = np.empty(len(refs), dtype=ATTRIBUTES)
    paths: List[str] = [""] * len(refs)
    mine, mine_paths = _attributes(local, refs[own])
    attrs[own] = mine
    for k, p in zip(np.nonzero(own)[0].tolist(), mine_paths):
        paths[k] = p
    ghost_at = np.nonzero(~own)[0]
    for q, buf in enumerate(answers):
        got, got_paths = _unpack(buf)
        at = ghost_at[owner == q]
        attrs[at] = got
        for k, p in zip(at.tolist(), got_paths):
            paths[k] = p
    gids = part.global_ids(refs)
    attrs["event"] = gids

    def g(ids):
        return gids[np.searchsorted(refs, ids)] if len(ids) else np.empty(0, np.int64)

    recv_send = np.full(len(local.recv), -1, dtype=np.int64)
    recv_send[local.recv_send >= 0] = g(took)
    return {"recv": g(local.recv), "recv_posted": g(local.recv_posted), "recv_send": recv_send,
            "recv_any_tag": local.recv_any_tag, "n_alternatives": local.n_alternatives,
            "alt_send": g(local.alt_send), "alt_lamport": local.alt_lamport,
            "findings": [(f.kind, f.location, int(e), f.count) for f, e in
                         zip(local.findings, g(finding_events))],
            "attrs": attrs, "paths": paths, "clocks": local.clocks,
            "lamport_missed": local.lamport_missed, "warnings": dict(local.warnings),
            "memory": dict(local.memory)}


def _pack(reply) -> bytes:
    import pickle

    return pickle.dumps((reply[0].tobytes(), reply[1]), protocol=pickle.HIGHEST_PROTOCOL)


def _unpack(buf: bytes):
    import pickle

    if not len(buf):
        return np.empty(0, dtype=ATTRIBUTES), []
    records, paths = pickle.loads(bytes(buf))
    return np.frombuffer(records, dtype=ATTRIBUTES), paths


def _merged(pieces: List[dict]):
    """The parts' receives in the whole trace's order, most alternatives first,
    ties in event order: (the order of the concatenated receives, alt_start,
    alt_send, alt_lamport)."""
    recv = np.concatenate([p["recv"] for p in pieces])
    counts = np.concatenate([p["n_alternatives"] for p in pieces]).astype(np.int64)
    order = np.lexsort((recv, -counts))
    # where each receive's alternatives start in the concatenated alternatives
    first = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    lens = counts[order]
    # the alternatives of the receives in their order: each one's run of indices
    take = np.repeat(first[order] - np.cumsum(lens) + lens, lens) + \
        np.arange(int(lens.sum()), dtype=np.int64)
    alt_send = np.concatenate([p["alt_send"] for p in pieces]).astype(np.int64)
    alt_lamport = np.concatenate([p["alt_lamport"] for p in pieces]).astype(bool)
    alt_start = np.concatenate(([0], np.cumsum(counts[order]))).astype(np.uint64)
    return order, alt_start, alt_send[take], alt_lamport[take]


class MergedRaces(Races):
    """The races of a trace analysed in parts: the whole trace's, in event ids of
    the whole trace; what a report shows of an event (location, time, tag, call
    path) was gathered from the part that holds it whole."""

    def __init__(self, trace, pieces: List[dict], assumption: dict, replay_stats,
                 names: Optional[List[str]] = None):
        self.trace = trace
        self._core = None
        self.assumption = assumption
        self.clocks = pieces[0]["clocks"]
        self.lamport_missed = int(sum(p["lamport_missed"] for p in pieces))
        self.warnings: Dict[str, int] = {}
        for p in pieces:
            for k, v in p["warnings"].items():
                self.warnings[k] = self.warnings.get(k, 0) + int(v)
        #: bytes of the largest part
        self.memory = {k: max(int(p["memory"][k]) for p in pieces) for k in pieces[0]["memory"]}
        #: what the replay in parts cost (earlc.parts.replay.ReplayStats)
        self.replay = replay_stats
        order, self.alt_start, self.alt_send, self.alt_lamport = _merged(pieces)
        self.recv = np.concatenate([p["recv"] for p in pieces])[order]
        self.recv_posted = np.concatenate([p["recv_posted"] for p in pieces])[order]
        self.recv_send = np.concatenate([p["recv_send"] for p in pieces])[order]
        self.recv_any_tag = np.concatenate([p["recv_any_tag"] for p in pieces])[order] \
            .astype(bool)
        # a location's findings are its part's, in their order
        found = sorted((f for p in pieces for f in p["findings"]), key=lambda f: f[1])
        self.findings = [Finding(k, int(l), int(e), int(n)) for k, l, e, n in found]
        attrs = np.concatenate([p["attrs"] for p in pieces])
        events, keep = np.unique(attrs["event"], return_index=True)
        self._attrs = attrs[keep]
        #: with names, each piece's "paths" are indices into them (one string
        #: per call path instead of one per event: the races in turn)
        self._names = names
        if names is not None:
            self._path_of = np.concatenate([np.asarray(p["paths"], dtype=np.int32)
                                            for p in pieces])[keep]
            return
        paths = [x for p in pieces for x in p["paths"]]
        self._paths = {int(e): paths[k] for e, k in zip(events.tolist(), keep.tolist())}

    def _rows(self, events):
        return np.searchsorted(self._attrs["event"], np.asarray(events, dtype=np.int64))

    def _locations(self, events):
        return self._attrs["location"][self._rows(events)]

    def _times(self, events):
        return self._attrs["time"][self._rows(events)]

    def _tags(self, events):
        return self._attrs["tag"][self._rows(events)]

    def _tag_of(self, e):
        t = int(self._attrs["tag"][self._rows([e])[0]])
        return t if t >= 0 else None

    def callpath(self, event: int) -> str:
        if self._names is not None:
            return self._names[int(self._path_of[self._rows([int(event)])[0]])]
        return self._paths[int(event)]


__all__ = ["races", "clocked_locations", "MergedRaces", "ATTRIBUTES"]
