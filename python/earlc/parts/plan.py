"""Which locations each part holds.

A part holds whole processes: a process's threads share its region of memory
and synchronise through locks, forks and barriers that the catalog reads
within the process, and a location's events are never split.  Processes (the
location groups of type "process", with the groups they created, such as an
accelerator's streams) go to parts in contiguous blocks of their order in the
definitions, which is MPI rank order in the traces of Score-P and of earlc:
neighbours in rank exchange most messages, so contiguous blocks keep most
messages inside a part.  Blocks are balanced by the event counts the
definitions announce, so that the largest part, which bounds the memory and
the time of the whole analysis, is as small as contiguous blocks allow.

With more parts than processes the parts beyond them hold nothing; more parts
than locations is refused (PartitionError).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np

from .._core import Error


class PartitionError(Error, ValueError):
    """A partition that cannot be made (more parts than locations)."""


@dataclass(frozen=True)
class Partition:
    """part_of[l]: the part of dense location l; parts: their number."""

    part_of: np.ndarray
    parts: int

    def locations(self, part: int) -> np.ndarray:
        """The dense locations of part `part`, ascending."""
        return np.nonzero(self.part_of == part)[0]

    def mask(self, part: int) -> bytes:
        """Part `part`'s locations as a byte mask over all locations."""
        return (self.part_of == part).astype(np.uint8).tobytes()

    def events(self, declared: np.ndarray) -> np.ndarray:
        """Announced events per part."""
        return np.bincount(self.part_of, weights=declared, minlength=self.parts).astype(np.int64)


def process_of_locations(raw_defs: dict) -> np.ndarray:
    """Per dense location, the index of the process it belongs to (a location
    group created by another, such as an accelerator's, counts as its
    creator's), numbered in order of first appearance."""
    groups = raw_defs["location_groups"]  # (defined, name, type, system parent, creator, rank)

    def root(g: int) -> int:
        seen = set()
        while 0 <= g < len(groups) and g not in seen:
            seen.add(g)
            creator = groups[g][4]
            if creator >= len(groups) or creator == g:
                break
            g = creator
        return g

    roots = [root(loc[3]) for loc in raw_defs["locations"]]
    number = {}
    return np.array([number.setdefault(r, len(number)) for r in roots], dtype=np.int64)


def plan(raw_defs: dict, parts: int) -> Partition:
    """The partition of the trace's locations into `parts` parts (see the module)."""
    locations = raw_defs["locations"]
    n = len(locations)
    if parts < 1:
        raise PartitionError("the number of parts must be at least 1, not %d" % parts)
    if parts > max(n, 1):
        raise PartitionError("%d parts for a trace of %d location%s: at most one part per "
                             "location" % (parts, n, "" if n == 1 else "s"))
    process = process_of_locations(raw_defs)
    declared = np.array([loc[4] for loc in locations], dtype=np.float64)
    n_proc = int(process.max()) + 1 if n else 0
    weight = np.bincount(process, weights=declared + 1, minlength=n_proc)
    block = _contiguous_blocks(weight, parts)
    return Partition(block[process].astype(np.int32) if n else np.empty(0, np.int32), parts)


def _contiguous_blocks(weight: np.ndarray, parts: int) -> np.ndarray:
    """Part of each item: contiguous blocks whose heaviest is as light as
    possible (a binary search on its weight, packing greedily), then split
    further where a block holds several items, until min(parts, items)
    blocks are non-empty (a split never makes the heaviest heavier)."""
    n = len(weight)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    lo, hi = float(weight.max()), float(weight.sum())
    while hi - lo > max(0.5, 1e-9 * hi):
        mid = (lo + hi) / 2
        if _blocks_needed(weight, mid) <= parts:
            hi = mid
        else:
            lo = mid
    starts, load = [0], 0.0
    for i, w in enumerate(weight.tolist()):
        if load and load + w > hi:
            starts.append(i)
            load = 0.0
        load += w
    want = min(parts, n)
    while len(starts) < want:
        ends = starts[1:] + [n]
        # the heaviest block of several items, split where its weight halves
        k = max((b for b in range(len(starts)) if ends[b] - starts[b] > 1),
                key=lambda b: (float(weight[starts[b]:ends[b]].sum()), -b))
        cum = np.cumsum(weight[starts[k]:ends[k]])
        cut = starts[k] + int(np.clip(np.searchsorted(cum, cum[-1] / 2) + 1, 1,
                                      ends[k] - starts[k] - 1))
        starts.insert(k + 1, cut)
    out = np.empty(n, dtype=np.int64)
    ends = starts[1:] + [n]
    for b, (s, e) in enumerate(zip(starts, ends)):
        out[s:e] = b
    return out


def _blocks_needed(weight: np.ndarray, cap: float) -> int:
    blocks, load = 1, 0.0
    for w in weight.tolist():
        if load and load + w > cap:
            blocks, load = blocks + 1, 0.0
        load += w
    return blocks


__all__ = ["Partition", "PartitionError", "plan", "process_of_locations"]
