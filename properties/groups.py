"""Segment reductions shared by the properties: maxima, minima and exclusive
running maxima over groups of rows, vectorised with numpy."""
import numpy as np


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
    out = np.full(len(values), floor, dtype=np.int64)
    if len(values) < 2:
        return out
    starts, group = segments(keys)
    span = int(values.max()) - floor + 1
    if span * (len(starts) + 1) >= 1 << 62:  # too wide to lift: group by group
        for a, b in zip(starts, np.append(starts[1:], len(values))):
            if b - a > 1:
                out[a + 1:b] = np.maximum(np.maximum.accumulate(values[a:b - 1]), floor)
        return out
    # lift each group above all earlier ones so one running maximum serves all
    lifted = (values - floor) + group.astype(np.int64) * span
    run = np.maximum.accumulate(lifted)
    prev = np.empty_like(run)
    prev[0] = -1
    prev[1:] = run[:-1]
    first = np.zeros(len(values), dtype=bool)
    first[starts] = True
    base = group.astype(np.int64) * span
    ok = ~first & (prev >= base)
    out[ok] = prev[ok] - base[ok] + floor
    return out


def first_of_groups(keys: np.ndarray, order_within: np.ndarray) -> np.ndarray:
    """Indices of the row with the largest order_within per key (any row order;
    ties go to the first row), ascending by key."""
    if len(keys) > 1 and bool(np.all(keys[1:] >= keys[:-1])):
        # rows already grouped (the usual case): no sort needed
        starts, group = segments(keys)
        best = np.maximum.reduceat(order_within, starts)
        cand = np.nonzero(order_within == best[group])[0]
        first = np.ones(len(cand), dtype=bool)
        first[1:] = group[cand[1:]] != group[cand[:-1]]
        return cand[first]
    idx = np.lexsort((-order_within, keys))
    k = keys[idx]
    keep = np.ones(len(idx), dtype=bool)
    keep[1:] = k[1:] != k[:-1]
    return idx[keep]


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
