"""What the whole trace's numbering needs of every part, spilled to the
scratch folder while the parts are analysed one after another (inturn.py).

The analysis in parts names events by their ids in the whole trace and
collective instances by their numbers there (docs/parallel.md, "Why the
numbers are the same").  The id of an event is the number of events before it
in the order (timestamp, location, position on the location): per location, a
count of its timestamps before the key.  Under MPI every process counts over
its own locations (Part.global_ids); parts analysed in turn count over
`LocationTimes`: every location's timestamps, written when its part is read
and searched for the few events a report names.

A location's timestamps are stored in blocks of BLOCK events: in memory the
first timestamp of each block, on disk each timestamp less its block's first
as 32 bits (4 bytes per event), or the whole block in 64 bits where its
events span 2**32 ticks or more.  A count reads the one block the key falls
in.  `Instances` keeps the keys of the collective instances that each part
numbers (those whose first member is its own), sorted, to count the
instances before a key.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from .scratch import Scratch

#: events per block of a location's spilled timestamps
BLOCK = 512
_NARROW = np.uint64(1 << 32)
#: in _count_narrow: past any clamped offset, and the distance between rows
_PAST = (1 << 32) + 1
_ROW = 1 << 34


class LocationTimes:
    """The timestamps of every location, spilled (see the module)."""

    def __init__(self, scratch: Scratch):
        self.scratch = scratch
        self._firsts: Dict[int, List[np.ndarray]] = {}  # per location: first time per block
        self._wide: Dict[int, List[np.ndarray]] = {}    # per block: offset in the wide file, -1
        self._count: Dict[int, int] = {}
        self._wide_at: Dict[int, int] = {}
        self._done: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}

    def add(self, location: int, times: np.ndarray) -> None:
        """Append the next timestamps of a location (ascending, in its order);
        every chunk but a location's last is a multiple of BLOCK long."""
        times = np.asarray(times, dtype=np.uint64)
        n0 = self._count.get(location, 0)
        if n0 % BLOCK:
            raise ValueError("location %d: a chunk of timestamps after a partial block"
                             % location)
        n = len(times)
        if not n:
            return
        blocks = (n + BLOCK - 1) // BLOCK
        firsts = times[::BLOCK].copy()  # not a view: it would keep the chunk alive
        base = np.repeat(firsts, BLOCK)[:n]
        delta = times - base
        lasts = times[np.minimum(np.arange(1, blocks + 1) * BLOCK, n) - 1]
        wide = (lasts - firsts) >= _NARROW
        wide_offset = np.full(blocks, -1, dtype=np.int64)
        if wide.any():
            at = self._wide_at.get(location, 0)
            for b in np.nonzero(wide)[0].tolist():
                chunk = times[b * BLOCK:(b + 1) * BLOCK]
                wide_offset[b] = at
                self.scratch.append("t%d.wide" % location, chunk)
                at += chunk.nbytes
                delta[b * BLOCK:(b + 1) * BLOCK] = 0
            self._wide_at[location] = at
        self.scratch.append("t%d.u32" % location, delta.astype(np.uint32))
        self._firsts.setdefault(location, []).append(firsts)
        self._wide.setdefault(location, []).append(wide_offset)
        self._count[location] = n0 + n

    def count(self, location: int) -> int:
        return self._count.get(location, 0)

    def locations(self) -> List[int]:
        return sorted(self._count)

    def _index(self, location: int):
        got = self._done.get(location)
        if got is None:
            got = (np.concatenate(self._firsts.get(location, [np.empty(0, np.uint64)])),
                   np.concatenate(self._wide.get(location, [np.empty(0, np.int64)])))
            self._done[location] = got
        return got

    def _wide_block(self, location: int, b: int) -> np.ndarray:
        """Block b of a location's timestamps, one spilled in 64 bits."""
        n = min(BLOCK, self._count[location] - b * BLOCK)
        return self.scratch.load("t%d.wide" % location, np.uint64,
                                 int(self._index(location)[1][b]), n)

    def before(self, location: int, times: np.ndarray, side: str) -> np.ndarray:
        """Per time: how many of the location's timestamps are below it (side
        "left") or at most it ("right")."""
        times = np.asarray(times, dtype=np.uint64)
        out = np.zeros(len(times), dtype=np.int64)
        count = self._count.get(location, 0)
        if not count or not len(times):
            return out
        firsts, wide = self._index(location)
        block = np.searchsorted(firsts, times, side=side) - 1
        inside = np.flatnonzero(block >= 0)  # others: before the location's first event
        narrow = inside[wide[block[inside]] < 0]
        if len(narrow):
            out[narrow] = self._count_narrow(location, block[narrow], times[narrow], side)
        for k in inside[wide[block[inside]] >= 0].tolist():
            b = int(block[k])
            out[k] = b * BLOCK + np.searchsorted(self._wide_block(location, b), times[k],
                                                 side=side)
        return out

    def _count_narrow(self, location: int, block: np.ndarray, times: np.ndarray,
                      side: str) -> np.ndarray:
        """Per time in its block of 32-bit offsets: the block's timestamps
        below it (left) or at most it (right), plus the blocks before.  The
        blocks the keys fall in are read once each from the mapped file, as
        rows of one ascending sequence (row r's offsets plus r * 2**33), in
        which one search counts every key (its offset plus its row's base)."""
        firsts, _ = self._index(location)
        count = self._count[location]
        rows, row_of = np.unique(block, return_inverse=True)
        at = rows.astype(np.int64)[:, None] * BLOCK + np.arange(BLOCK, dtype=np.int64)
        mapped = self.scratch.map("t%d.u32" % location, np.uint32)
        offsets = np.where(at < count, mapped[np.minimum(at, count - 1)].astype(np.int64),
                           _PAST)  # a last block's missing entries: past every key
        del mapped
        self.scratch.read += len(rows) * BLOCK * 4
        base = np.arange(len(rows), dtype=np.int64)[:, None] * _ROW
        # a key's offset in its block, clamped below _PAST: any offset of 2**32 or more
        rel = np.minimum(times - firsts[block], _NARROW).astype(np.int64)
        found = np.searchsorted((offsets + base).ravel(), rel + base[row_of, 0], side=side)
        return block.astype(np.int64) * BLOCK + found - row_of.astype(np.int64) * BLOCK

    def count_before(self, time: np.ndarray, location: np.ndarray,
                     position: np.ndarray) -> np.ndarray:
        """Per key (time, location, position on it): the events of the whole
        trace before it in the order (time, location, position): its id."""
        time = np.asarray(time, dtype=np.uint64)
        location = np.asarray(location, dtype=np.int64)
        position = np.asarray(position, dtype=np.int64)
        out = np.zeros(len(time), dtype=np.int64)
        for l in self.locations():
            left = location > l   # a key of a later location: the equal times come first
            earlier = location < l
            if left.any():
                out[left] += self.before(l, time[left], "right")
            if earlier.any():
                out[earlier] += self.before(l, time[earlier], "left")
            same = location == l
            out[same] += position[same]
        return out


class Instances:
    """The keys (time, location, position) of the collective instances'
    first members, over all parts, each counted once (by the part of its first
    member); sorted, to count the instances before a key."""

    def __init__(self):
        self._pieces: List[np.ndarray] = []
        self._keys = None

    def add(self, time: np.ndarray, location: np.ndarray, position: np.ndarray) -> None:
        self._pieces.append(np.rec.fromarrays(
            (np.asarray(time, np.uint64), np.asarray(location, np.int64),
             np.asarray(position, np.int64)), names="t,l,p"))
        self._keys = None

    def before(self, time, location, position) -> np.ndarray:
        """Per key: the instances whose first member comes before it."""
        if self._keys is None:
            keys = np.concatenate(self._pieces) if self._pieces else \
                np.rec.fromarrays((np.empty(0, np.uint64), np.empty(0, np.int64),
                                   np.empty(0, np.int64)), names="t,l,p")
            self._keys = np.sort(keys, order=("t", "l", "p"))
        probe = np.rec.fromarrays((np.asarray(time, np.uint64), np.asarray(location, np.int64),
                                   np.asarray(position, np.int64)), names="t,l,p")
        if not len(self._keys):
            return np.zeros(len(probe), dtype=np.int64)
        return np.searchsorted(self._keys, probe, side="left").astype(np.int64)


__all__ = ["LocationTimes", "Instances", "BLOCK"]
