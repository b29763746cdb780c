"""Exact severity sums per (metric, call path, location).

Severities are integer ticks (or counts, or bytes).  They are summed with int64
arithmetic after sorting by key, so the totals are exact and do not depend on
the order in which properties or events were evaluated.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from ..sums import sum_and_count_by_key, sum_by_key


class SeverityStore:
    """Severities per metric, summed per (call path, location) as they are added:
    each part keeps one row per distinct cell, not one per occurrence, so that a
    catalog's stores stay small next to the trace."""

    def __init__(self, n_locations: int):
        self.n_locations = n_locations
        self._parts: Dict[str, List[Tuple[np.ndarray, np.ndarray]]] = {}

    def _keys(self, cnode, location, value):
        """(cell key, value) of the rows with cnode >= 0 (an occurrence outside
        every region cannot be placed in the call tree)."""
        cnode = np.asarray(cnode, dtype=np.int64)
        keep = cnode >= 0
        if keep.all():  # the usual case: no copies
            return (cnode * self.n_locations + np.asarray(location, dtype=np.int64),
                    np.asarray(value, dtype=np.int64))
        return (cnode[keep] * self.n_locations + np.asarray(location, dtype=np.int64)[keep],
                np.asarray(value, dtype=np.int64)[keep])

    def add(self, metric: str, cnode: np.ndarray, location: np.ndarray, value: np.ndarray) -> None:
        """Add value[i] at (cnode[i], location[i]); rows with cnode < 0 are dropped."""
        # exact integer sums: adding them up again in table() gives the same totals
        self._parts.setdefault(metric, []).append(sum_by_key(*self._keys(cnode, location, value)))

    def add_counted(self, counts: "SeverityStore", metric: str, cnode: np.ndarray,
                    location: np.ndarray, value: np.ndarray) -> None:
        """add(), and 1 per row into counts (a store of occurrences): both from one
        grouping of the rows by cell."""
        keys, sums, n = sum_and_count_by_key(*self._keys(cnode, location, value))
        self._parts.setdefault(metric, []).append((keys, sums))
        counts._parts.setdefault(metric, []).append((keys, n))

    def put_in_order(self, metrics) -> None:
        """Keep the metrics in this order (those not in it after them)."""
        rank = {m: k for k, m in enumerate(metrics)}
        self._parts = dict(sorted(self._parts.items(),
                                  key=lambda kv: rank.get(kv[0], len(rank))))

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
        keys = np.concatenate([p[0] for p in parts])
        sums = np.concatenate([p[1] for p in parts])
        if len(keys) == 0:
            return keys, keys, sums
        if len(parts) > 1:
            keys, sums = sum_by_key(keys, sums)
        nz = sums != 0
        return keys[nz] // self.n_locations, keys[nz] % self.n_locations, sums[nz]

    @property
    def metrics(self) -> List[str]:
        return list(self._parts)
