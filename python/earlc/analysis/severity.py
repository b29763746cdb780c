"""Exact severity sums per (metric, call path, location).

Severities are integer ticks (or counts, or bytes).  They are summed with int64
arithmetic after sorting by key, so the totals are exact and do not depend on
the order in which properties or events were evaluated.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np


def sum_by_key(keys: np.ndarray, values: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(distinct keys ascending, int64 sum of the values of each): exact."""
    if len(keys) == 0:
        return keys, values
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.concatenate(([0], np.nonzero(np.diff(keys))[0] + 1))
    return keys[starts], np.add.reduceat(values, starts)


class SeverityStore:
    def __init__(self, n_locations: int):
        self.n_locations = n_locations
        self._parts: Dict[str, List[Tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}

    def add(self, metric: str, cnode: np.ndarray, location: np.ndarray, value: np.ndarray) -> None:
        """Add value[i] at (cnode[i], location[i]); rows with cnode < 0 are dropped
        (an occurrence outside every region cannot be placed in the call tree)."""
        cnode = np.asarray(cnode, dtype=np.int64)
        keep = cnode >= 0
        self._parts.setdefault(metric, []).append(
            (cnode[keep], np.asarray(location, dtype=np.int64)[keep],
             np.asarray(value, dtype=np.int64)[keep]))

    def declare(self, metric: str) -> None:
        """Make the metric exist even when nothing is ever added to it."""
        self._parts.setdefault(metric, [])

    def table(self, metric: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cnode, location, value) with one row per distinct (cnode, location),
        sorted by cnode then location, zero rows dropped."""
        parts = self._parts.get(metric, [])
        if not parts:
            e = np.empty(0, np.int64)
            return e, e, e
        c = np.concatenate([p[0] for p in parts])
        l = np.concatenate([p[1] for p in parts])
        v = np.concatenate([p[2] for p in parts])
        if len(c) == 0:
            return c, l, v
        keys, sums = sum_by_key(c * self.n_locations + l, v)
        nz = sums != 0
        return keys[nz] // self.n_locations, keys[nz] % self.n_locations, sums[nz]

    @property
    def metrics(self) -> List[str]:
        return list(self._parts)
