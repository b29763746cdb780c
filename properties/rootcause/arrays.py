"""Numpy helpers the root-cause modules share: searches of sorted keys, segments
of CSR tables, and the rounding of float tick values to integer severities."""
import numpy as np


def sorted_search(keys: np.ndarray, needles: np.ndarray, side: str = "left") -> np.ndarray:
    """np.searchsorted with the needles sorted first: far fewer cache misses on
    large key arrays."""
    if len(needles) < 1024:
        return np.searchsorted(keys, needles, side=side)
    order = np.argsort(needles, kind="stable")
    out = np.empty(len(needles), dtype=np.int64)
    out[order] = np.searchsorted(keys, needles[order], side=side)
    return out


def gather_segments(offset: np.ndarray, queries, *columns):
    """The segments [offset[q], offset[q + 1]) of the columns for the given
    queries, in that order: (new offsets, [gathered column, ...])."""
    queries = np.asarray(queries, dtype=np.int64)
    lo = offset[queries]
    n = offset[queries + 1] - lo
    new = np.concatenate(([0], np.cumsum(n))).astype(np.int64)
    entry = np.repeat(lo - new[:-1], n) + np.arange(new[-1], dtype=np.int64)
    return new, [c[entry] for c in columns]


#: numpy.sum adds fewer values than this one by one, more pairwise
_NUMPY_SEQUENTIAL_SUM = 8


def segment_sums(values: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """numpy.sum of each segment [offset[k], offset[k + 1]) of values, to the bit:
    short segments added one by one (as numpy.sum does; np.add.reduceat does
    not), column by column over a zero-padded table; long ones by numpy.sum."""
    size = np.diff(offset)
    short = np.nonzero(size < _NUMPY_SEQUENTIAL_SUM)[0]
    out = np.zeros(len(size))
    for i in range(_NUMPY_SEQUENTIAL_SUM - 1):
        has = short[size[short] > i]
        out[has] += values[offset[has] + i]
    for k in np.nonzero(size >= _NUMPY_SEQUENTIAL_SUM)[0].tolist():
        out[k] = values[offset[k]:offset[k + 1]].sum()
    return out


def at_cells(ufunc, table: np.ndarray, row: np.ndarray, col: np.ndarray, values) -> None:
    """ufunc.at(table, (row, col), values) for a C-ordered 2-D table: the same
    operations in the same order, through the flat index of each cell (numpy's
    ufunc.at with a pair of index arrays is several times slower)."""
    if not table.flags.c_contiguous:  # no flat view of it
        ufunc.at(table, (row, col), values)
        return
    ufunc.at(table.reshape(-1), np.asarray(row, np.int64) * table.shape[1] + col, values)


def to_ticks(n_locations, loc, cnode, value):
    """Float tick values summed per (call path, location) and rounded so that every
    location's total is its exact sum rounded (largest remainders get the ticks)."""
    if not len(loc):
        e = np.empty(0, np.int64)
        return e, e, e
    key = cnode.astype(np.int64) * (n_locations + 1) + loc
    uk, inv = np.unique(key, return_inverse=True)
    val = np.zeros(len(uk))
    np.add.at(val, inv, value)
    c, l = uk // (n_locations + 1), uk % (n_locations + 1)
    base = np.floor(val)
    frac = val - base
    out = base.astype(np.int64)
    want = np.rint(np.bincount(l, weights=val, minlength=n_locations + 1)).astype(np.int64)
    have = np.bincount(l, weights=out, minlength=n_locations + 1).astype(np.int64)
    extra = want - have  # ticks still to give, per location
    order = np.lexsort((-frac, l))
    rank = np.arange(len(order)) - np.searchsorted(l[order], l[order])
    give = rank < extra[l[order]]
    out[order[give]] += 1
    return c, l, out
