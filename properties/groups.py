"""Segment reductions shared by the properties: maxima, minima and exclusive
running maxima over groups of rows, vectorised with numpy; those that need a
sequential pass (running maxima, the most severe row of each group) are C
kernels (csrc/catalog)."""
import numpy as np

from earlc import _core


def int64_array(a: np.ndarray) -> np.ndarray:
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
    waiting one waits for, which a picture joins to it by an arrow."""
    instance = m["instance"]
    best = first_of_groups(instance, key)  # ascending by instance
    return m.where[best[np.searchsorted(instance[best], instance)]]


def instance_members(ctx, coll_type: int, complete_only: bool = False):
    """(instance, member event) of every member of the EARL layer's collective
    instances of one type (0: MPI collectives, 1: OpenMP team barriers)."""
    st = ctx.states
    start = st.coll_member_start.astype(np.int64)
    inst = np.repeat(np.arange(len(start) - 1), np.diff(start))
    members = st.coll_members.astype(np.int64)
    keep = st.coll_type[inst] == coll_type
    if complete_only:
        keep &= st.coll_complete[inst] >= 0
    if ctx.view is not None:  # a window's analysis: the instances with a member in view
        touched = np.zeros(len(start), dtype=bool)
        touched[inst[ctx.view.contains(members)]] = True
        keep &= touched[inst]
    return inst[keep], members[keep]
