"""Reductions over groups of rows, for properties: maxima, minima and exclusive
running maxima per group, the most severe row of each group.  Public, so that a
plugin can do what the built-ins do (docs/plugins.md): vectorised with numpy,
and the reductions that need a sequential pass (running maxima, the first
largest row of each run) are C kernels (csrc/catalog)."""
from __future__ import annotations

import numpy as np

from .. import _core


def int64_array(a) -> np.ndarray:
    """a as a contiguous int64 array, as the C kernels take them (no copy when
    it is one already)."""
    return np.ascontiguousarray(a, dtype=np.int64)


def segments(keys: np.ndarray):
    """For rows sorted by key: (start of each group, group index of each row)."""
    if len(keys) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts = np.concatenate(([0], np.nonzero(np.diff(keys))[0] + 1))
    group = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(keys))))
    return starts, group


def group_max(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row, the maximum of values over the rows with the same key (rows sorted by key)."""
    starts, group = segments(keys)
    if len(starts) == 0:
        return values.copy()
    return np.maximum.reduceat(values, starts)[group]


def group_min(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row, the minimum of values over the rows with the same key (rows sorted by key)."""
    starts, group = segments(keys)
    if len(starts) == 0:
        return values.copy()
    return np.minimum.reduceat(values, starts)[group]


def exclusive_running_max(keys: np.ndarray, values: np.ndarray, floor: int) -> np.ndarray:
    """Per row, the maximum of values over the earlier rows of its group (floor for
    the first row of a group); rows sorted by key, values >= floor."""
    out = np.empty(len(values), dtype=np.int64)
    _core.exclusive_running_max(int64_array(keys), int64_array(values), out, int(floor))
    return out


def first_of_groups(keys: np.ndarray, order_within: np.ndarray) -> np.ndarray:
    """Indices of the row with the largest order_within per key (any row order;
    ties go to the first row), ascending by key."""
    # rows usually come grouped (each key in one run of rows): one pass in C
    # over the runs, then the runs in key order
    rows = np.empty(len(keys), dtype=np.int64)
    rows = rows[:_core.first_of_runs(int64_array(keys), int64_array(order_within), rows)]
    run_keys = keys[rows]
    if len(rows) > 1 and not bool(np.all(run_keys[1:] >= run_keys[:-1])):
        by_key = np.argsort(run_keys, kind="stable")
        rows, run_keys = rows[by_key], run_keys[by_key]
    if not len(rows) or bool(np.all(run_keys[1:] != run_keys[:-1])):
        return rows
    idx = np.lexsort((-order_within, keys))  # a key in several runs
    k = keys[idx]
    keep = np.ones(len(idx), dtype=bool)
    keep[1:] = k[1:] != k[:-1]
    return idx[keep]


def member_with_largest(m, key: np.ndarray) -> np.ndarray:
    """Per member of collective instances (Instances with an "instance" column,
    rows sorted by it): the `where` (its call) of the member of the same
    instance with the largest key (the first such row on ties): the member a
    waiting one waits for, which the HTML report's timeline joins to it by an
    arrow (a property's `partner` column)."""
    instance = m["instance"]
    best = first_of_groups(instance, key)  # ascending by instance
    return m.where[best[np.searchsorted(instance[best], instance)]]


def ids_in(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Whether each value is one of ids, as a boolean array: what np.isin
    answers, from a bitmap of the ids' range in C (event ids of one trace: a bit
    per event) instead of a binary search per value, whose probes miss the cache
    when the values come in no order.  ids in ascending order cost no sort."""
    values, ids = int64_array(values), int64_array(ids)
    if len(ids) > 1 and not bool(np.all(ids[1:] >= ids[:-1])):
        ids = np.sort(ids)
    out = np.empty(len(values), dtype=np.uint8)
    _core.ids_in_set(values, ids, out)
    return out.view(bool)


__all__ = ["ids_in", "segments", "group_max", "group_min", "exclusive_running_max",
           "first_of_groups", "member_with_largest", "int64_array"]
