"""Exact integer sums per key: the one group-by of earlc's tables (severities per
(call path, location), the call tree's time per location, a report's cells).

Values are integers (ticks, counts, bytes) and stay int64 throughout, so a sum
does not depend on the order of its terms.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np


#: float64 holds every integer below this exactly
_EXACT_IN_FLOAT = 2 ** 53


def sum_by_key(keys: np.ndarray, values: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(distinct keys ascending, int64 sum of the values of each): exact."""
    if len(keys) == 0:
        return keys, values
    counted = _sum_by_counting(keys, values)
    if counted is not None:
        return counted
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.concatenate(([0], np.nonzero(np.diff(keys))[0] + 1))
    return keys[starts], np.add.reduceat(values, starts)


def sum_and_count_by_key(keys: np.ndarray, values: np.ndarray
                         ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys ascending, int64 sum of the values of each, number of
    values of each): sum_by_key and the counts from the same grouping (the
    analysis adds a property's severities and its occurrences per cell)."""
    if len(keys) == 0:
        return keys, values, values
    counted = _sum_by_counting(keys, values, with_counts=True)
    if counted is not None:
        return counted
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.concatenate(([0], np.nonzero(np.diff(keys))[0] + 1))
    return (keys[starts], np.add.reduceat(values, starts),
            np.diff(np.append(starts, len(keys))).astype(np.int64))


def _sum_by_counting(keys: np.ndarray, values: np.ndarray, with_counts: bool = False):
    """sum_by_key in linear time when the keys are few and dense, or None.
    bincount adds in float64, which is exact here: every partial sum is at most
    the sum of the absolute values, checked to be below 2**53."""
    lo, hi = int(keys.min()), int(keys.max())
    if lo < 0 or hi > 4 * len(keys) + (1 << 20):
        return None
    magnitude = np.abs(values).astype(np.float64).sum()  # float: cannot overflow
    if not magnitude < _EXACT_IN_FLOAT / 2:  # margin for the rounding of this check
        return None
    counts = np.bincount(keys, minlength=hi + 1)
    sums = np.bincount(keys, weights=values, minlength=hi + 1)
    distinct = np.nonzero(counts)[0]
    out = distinct.astype(keys.dtype, copy=False), sums[distinct].astype(np.int64)
    return out + (counts[distinct].astype(np.int64),) if with_counts else out
